package synccore

import (
	"runtime"
	"testing"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
)

// TestHotPathTaken: the frames event of a delta goes through the
// reflection-free reader, not the generic decoder.
func TestHotPathTaken(t *testing.T) {
	data := encodeFrames([]Frame{{Seq: 2, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: 3, Text: "x"}})
	var ev Event
	if decodeEventInPlace(encodeEvent(Event{Type: EvFrames, Data: data}), &ev) != nil || ev.Type != EvFrames || len(ev.Data) != len(data) {
		t.Fatalf("fast event path not taken: %+v", ev)
	}
	r := msgp.Reader{Buf: data}
	r.ArrayHeader()
	var rf rawFrame
	if err := nextFrame(&r, &rf); err != nil || rf.full != nil || string(rf.text) != "x" {
		t.Fatalf("fast delta path not taken: %+v %v", rf, err)
	}
}

// TestDeltaAllocs: a delta costs at most one allocation (the result) on
// both paths, whatever the part's length.
func TestDeltaAllocs(t *testing.T) {
	for _, size := range []int{10, 1 << 20} {
		c := liveClient(t, agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, string(make([]byte, size)))))
		off := int64(size)
		seq := uint64(2)
		next := func() []byte {
			d := encodeFrames([]Frame{{Seq: seq, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: off, Text: "abc"}})
			seq++
			off += 3
			return d
		}
		c.handleBytes(encodeEvent(Event{Type: EvFrames, Data: next()})) // warm up buffers
		const runs = 50
		var raws [][]byte
		for range runs + 1 { // AllocsPerRun calls once more to warm up
			raws = append(raws, encodeEvent(Event{Type: EvFrames, Data: next()}))
		}
		if n := testing.AllocsPerRun(runs, func() { c.handleBytes(raws[0]); raws = raws[1:] }); n > 1 {
			t.Fatalf("size %d: handleBytes: %v allocs per delta", size, n)
		}
		var evs []Event
		for range runs + 1 {
			evs = append(evs, Event{Type: EvFrames, Data: next()})
		}
		if n := testing.AllocsPerRun(runs, func() { c.Handle(evs[0]); evs = evs[1:] }); n > 1 {
			t.Fatalf("size %d: Handle: %v allocs per delta", size, n)
		}
		if c.status != StatusLive || c.byID["m1"].textLen(0) != int(off) {
			t.Fatalf("deltas not applied: %s", c.status)
		}
	}
}

// TestDeltaCostFlat: the bytes allocated per delta do not grow with the
// text already held (no per-delta copy of the part), 1 KB against 10 MB.
func TestDeltaCostFlat(t *testing.T) {
	perDelta := func(size int) float64 {
		c := liveClient(t, agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, string(make([]byte, size)))))
		const n = 2000
		raws := make([][]byte, n)
		for i := range raws {
			raws[i] = encodeEvent(Event{Type: EvFrames, Data: encodeFrames([]Frame{{Seq: uint64(i + 2), Kind: FrameDelta,
				MessageID: "m1", Revision: 1, PartID: "p1", Offset: int64(size + 12*i), Text: "lorem ipsum "}})})
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, r := range raws {
			c.handleBytes(r)
		}
		runtime.ReadMemStats(&after)
		if c.byID["m1"].textLen(0) != size+12*n {
			t.Fatalf("deltas not applied")
		}
		return float64(after.TotalAlloc-before.TotalAlloc) / n
	}
	small, big := perDelta(1<<10), perDelta(10<<20)
	if big > 1.3*small+16 {
		t.Fatalf("bytes per delta: %.0f at 10 MB vs %.0f at 1 KB", big, small)
	}
}
