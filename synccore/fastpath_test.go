package synccore

import "testing"

// TestHotPathTaken: the frames event of a delta goes through the
// reflection-free reader, not the generic decoder.
func TestHotPathTaken(t *testing.T) {
	data := EncodeFrames([]Frame{{Seq: 2, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: 3, Text: "x"}})
	var ev Event
	if !decodeEventFast(EncodeEvent(Event{Type: EvFrames, Data: data}), &ev) || ev.Type != EvFrames || len(ev.Data) != len(data) {
		t.Fatalf("fast event path not taken: %+v", ev)
	}
	r := reader{b: data}
	r.arrayHeader()
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
			d := EncodeFrames([]Frame{{Seq: seq, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: off, Text: "abc"}})
			seq++
			off += 3
			return d
		}
		c.HandleBytes(EncodeEvent(Event{Type: EvFrames, Data: next()})) // warm up buffers
		const runs = 50
		var raws [][]byte
		for range runs + 1 { // AllocsPerRun calls once more to warm up
			raws = append(raws, EncodeEvent(Event{Type: EvFrames, Data: next()}))
		}
		if n := testing.AllocsPerRun(runs, func() { c.HandleBytes(raws[0]); raws = raws[1:] }); n > 1 {
			t.Fatalf("size %d: HandleBytes: %v allocs per delta", size, n)
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
