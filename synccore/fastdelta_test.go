package synccore

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestFastDeltaSameAsOrdinaryPath replays random delta streams (in order,
// duplicated, out of order, gapped, to other parts and messages, odd
// encodings) through a client with the shortcut and one without: every
// output, the view and the digest must be the same.
func TestFastDeltaSameAsOrdinaryPath(t *testing.T) {
	for seed := range int64(200) {
		rng := rand.New(rand.NewSource(seed))
		msgs := []Message{
			agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, "ab"),
				Part{PartID: "t", Sequence: 2, Type: PartTool, State: ToolRunning, ToolCallID: "c", ToolName: "sh"},
				Part{PartID: "r", Sequence: 3, Type: PartReasoning, State: StateStreaming, StepID: "st1"}),
			agentMsg("m2", 2, 2, MessageStreaming, textPart("q1", 1, StateStreaming, "")),
			agentMsg("m3", 3, 1, MessageDone, textPart("d1", 1, StateDone, "x")),
		}
		fast, slow := liveClient(t, msgs...), liveClient(t, msgs...)
		have := map[string]int64{"m1/p1": 2, "m1/r": 0, "m2/q1": 0, "m3/d1": 1}
		seq := uint64(2)
		for step := range 300 {
			ids := [][2]string{{"m1", "p1"}, {"m1", "r"}, {"m2", "q1"}, {"m1", "t"}, {"m3", "d1"}, {"m9", "p1"}, {"m1", "zz"}}
			id := ids[0]
			if rng.Intn(4) == 0 {
				id = ids[rng.Intn(len(ids))]
			}
			key := id[0] + "/" + id[1]
			text := []string{"hello ", "", "é", string(bytes.Repeat([]byte("w"), 300))}[rng.Intn(4)]
			f := Frame{Seq: seq, Kind: FrameDelta, MessageID: id[0], Revision: 1, PartID: id[1], Offset: have[key], Text: text}
			if id[0] == "m2" {
				f.Revision = 2
			}
			switch rng.Intn(40) {
			case 0:
				f.Seq += uint64(rng.Intn(3)) // a gap (or not)
			case 1:
				f.Offset -= int64(rng.Intn(3)) // a duplicate or overlap
			case 2:
				f.Offset += int64(rng.Intn(3)) // a gap in the text
			case 3:
				f.Revision += int64(rng.Intn(3)) - 1
			}
			data := encodeFrames([]Frame{f})
			if rng.Intn(10) == 0 { // an odd but valid encoding: keys reordered
				data = libEncode(t, []any{map[string]any{"text": f.Text, "seq": f.Seq, "kind": "delta", "message_id": f.MessageID,
					"revision": f.Revision, "part_id": f.PartID, "offset": f.Offset}})
			}
			ev := encodeEvent(Event{Type: EvFrames, Data: data})
			if rng.Intn(15) == 0 { // the client lost the connection and came back
				ev = encodeEvent(Event{Type: EvConnectionLost, Jitter: 7})
			}
			noFastDelta = false
			got := fast.handleBytes(ev)
			noFastDelta = true
			want := slow.handleBytes(ev)
			noFastDelta = false
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d step %d: output\nfast %x\nslow %x", seed, step, got, want)
			}
			if fast.status != slow.status || fast.lastSeq != slow.lastSeq || fast.attempt != slow.attempt {
				t.Fatalf("seed %d step %d: state differs", seed, step)
			}
			if fast.status == StatusBackoff {
				break
			}
			if want[0] == 0x81 && bytes.Contains(want, []byte("render")) && f.Seq == seq && f.Offset == have[key] {
				have[key] += int64(len(f.Text))
			}
			if f.Seq == seq {
				seq++
			}
		}
		if a, b := fast.Digest(), slow.Digest(); a != b || !bytes.Equal(fast.viewBytes(), slow.viewBytes()) {
			t.Fatalf("seed %d: views differ", seed)
		}
	}
}

// TestFastDeltaTaken: a stream of in-order deltas goes through the
// shortcut after the first, and appendHandleBytes then allocates nothing.
func TestFastDeltaTaken(t *testing.T) {
	c := liveClient(t, agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, "")))
	off := int64(0)
	seq := uint64(2)
	next := func() []byte {
		d := encodeFrames([]Frame{{Seq: seq, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: off, Text: "abc"}})
		seq++
		off += 3
		return encodeEvent(Event{Type: EvFrames, Data: d})
	}
	buf := c.appendHandleBytes(nil, next()) // the first delta warms the caches
	ev := next()
	if _, ok := c.fastDelta(nil, ev); !ok {
		t.Fatal("shortcut not taken for an in-order delta")
	}
	evs := make([][]byte, 101)
	for i := range evs {
		evs[i] = next()
	}
	if n := testing.AllocsPerRun(100, func() { buf = c.appendHandleBytes(buf[:0], evs[0]); evs = evs[1:] }); n > 0 {
		t.Fatalf("%v allocations per delta", n)
	}
	if o, err := decodeOutput(buf); err != nil || len(o.Commands) != 1 || o.Commands[0].MessageIDs[0] != "m1" {
		t.Fatalf("output %+v %v", o, err)
	}
}
