package synccore

import "testing"

// compactDelta runs one delta to m1/p1 through appendHandleCompact.
func compactDelta(c *Client, seq uint64, offset int64, text string) (raw, res []byte, compact uint32) {
	raw = encodeEvent(framesEvent(Frame{Seq: seq, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: offset, Text: text}))
	res, _, compact = c.appendHandleCompact(nil, raw)
	return raw, res, compact
}

// TestHandleCompact walks the compact append's rule: it needs a previous
// take that appended to the message alone, and it stops at anything the
// host would not know from it (a pending change, a scalar that moved).
func TestHandleCompact(t *testing.T) {
	c := liveClientWithText(t, "hello") // its take was a reset: no base yet
	_, res, compact := compactDelta(c, 2, 5, " wor")
	if compact != 0 || len(res) == 0 || res[0] != 0xc0 {
		t.Fatalf("first delta: compact %x, %x; want the appends form", compact, res)
	}
	raw, res, compact := compactDelta(c, 3, 9, "ld")
	if compact == 0 || len(res) != 0 {
		t.Fatalf("second delta: compact %x, %x; want a compact answer", compact, res)
	}
	i, at := splitCompact(compact)
	if i != 0 || string(raw[at:]) != "ld" {
		t.Fatalf("compact answer: part %d, text %q", i, raw[at:])
	}
	// The host holds what the compact answer said: the next take is empty.
	if ch := c.TakeChanges(); len(ch.Messages) != 0 || c.View().Messages[0].Parts[0].Text != "hello world" {
		t.Fatalf("after the compact answer: %+v, text %q", ch.Messages, c.View().Messages[0].Parts[0].Text)
	}

	// A map take (TakeChanges above) is no base: the next delta is not compact.
	if _, _, compact = compactDelta(c, 4, 11, "!"); compact != 0 {
		t.Fatal("a compact answer after a Changes map take")
	}
	if _, _, compact = compactDelta(c, 5, 12, "!"); compact == 0 {
		t.Fatal("no compact answer after an appends take")
	}
	// A delta handled without a take leaves it pending: the next answer must carry both.
	c.handleBytes(encodeEvent(framesEvent(Frame{Seq: 6, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: 13, Text: "?"})))
	_, res, compact = compactDelta(c, 7, 14, "?")
	hc, err := decodeHandleChanges(res)
	if compact != 0 || err != nil || hc.Changes.Messages[0].Appends[0].Text != "??" {
		t.Fatalf("with a pending change: compact %x, %+v, %v", compact, hc.Changes, err)
	}
	// A scalar the last take gave moved (older history asked for): not compact.
	c.olderReq = 1 // as if a page of older history were in flight
	if _, _, compact = compactDelta(c, 8, 15, "."); compact != 0 {
		t.Fatal("a compact answer while a scalar changed since the last take")
	}
}

// TestCompactAppendPacking checks packCompact's bounds and inverse.
func TestCompactAppendPacking(t *testing.T) {
	for _, tc := range [][2]int{{0, 1}, {3, 40}, {maxCompactIndex, maxCompactTextAt}} {
		v := packCompact(tc[0], tc[1])
		if v == 0 || v>>31 != 0 {
			t.Fatalf("packCompact(%d, %d) = %#x", tc[0], tc[1], v)
		}
		if i, at := splitCompact(v); i != tc[0] || at != tc[1] {
			t.Fatalf("split %#x = %d, %d", v, i, at)
		}
	}
}

// TestPartFrameKeptText walks PartChange.KeptText: a part frame whose text
// continues what the host holds of the part comes without it, through any
// number of part frames before the take; one that does not comes whole.
// A mirror patched with every take must hold the client's text.
func TestPartFrameKeptText(t *testing.T) {
	c := liveClientWithText(t, "hello")
	var m Mirror // holds what the host took: the client's view
	held := c.View().Messages[0]
	if _, err := m.Apply(Changes{Reset: true, Messages: []MessageChange{{MessageID: "m1", Message: &held}}}); err != nil {
		t.Fatal(err)
	}
	seq := uint64(2)
	part := func(state PartState, text string) {
		p := Part{PartID: "p1", Sequence: 1, Type: PartText, StepID: "s1", State: state, Text: text}
		c.handleBytes(encodeEvent(framesEvent(Frame{Seq: seq, Kind: FramePart, MessageID: "m1", Revision: 1, Part: &p})))
		seq++
	}
	take := func(step, wantText string, wantKept bool) {
		t.Helper()
		ch := c.TakeChanges()
		if len(ch.Messages) != 1 || len(ch.Messages[0].Parts) != 1 {
			t.Fatalf("%s: %+v", step, ch.Messages)
		}
		if pc := ch.Messages[0].Parts[0]; pc.Part.Text != wantText || pc.KeptText != wantKept {
			t.Fatalf("%s: part text %q kept %v, want %q %v", step, pc.Part.Text, pc.KeptText, wantText, wantKept)
		}
		got, err := m.Apply(ch)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if a, b := got.At(0).Parts[0].Text, c.View().Messages[0].Parts[0].Text; a != b {
			t.Fatalf("%s: mirror %q, client %q", step, a, b)
		}
	}
	_, res, _ := compactDelta(c, seq, 5, " world") // a take in the appends form
	seq++
	if hc, err := decodeHandleChanges(res); err != nil {
		t.Fatal(err)
	} else if _, err := m.Apply(*hc.Changes); err != nil { // the host holds "hello world"
		t.Fatal(err)
	}
	part(StateStreaming, "hello world!")
	take("a part that continues the held text", "!", true)
	part(StateStreaming, "goodbye")
	take("a part that does not", "goodbye", false)
	part(StateStreaming, "goodbye!")
	part(StateStreaming, "goodbye!?")
	take("two parts, each continuing the last", "!?", true)
	part(StateStreaming, "goodbye!?x")
	part(StateStreaming, "other")
	take("two parts, the second not continuing", "other", false)
	part(StateStreaming, "other text")
	part(StateDone, "otHer text!")
	take("the held text changed in the middle", "otHer text!", false)
}

// TestKeptFrames walks Frame.Kept (protocol §4.5): part and message frames
// whose texts come without the beginning the client holds get it back; one
// that names a length the client does not hold resyncs; kept on anything
// but a text part of the frame is malformed.
func TestKeptFrames(t *testing.T) {
	c := liveClientWithText(t, "hello")
	compactDelta(c, 2, 5, " world")
	done := Part{PartID: "p1", Sequence: 1, Type: PartText, StepID: "s1", State: StateDone, Text: "!"}
	c.handleBytes(encodeEvent(framesEvent(Frame{Seq: 3, Kind: FramePart, MessageID: "m1", Revision: 1, Part: &done, Kept: []KeptLen{{"p1", 11}}})))
	if got := c.View().Messages[0].Parts[0]; got.Text != "hello world!" || got.State != StateDone {
		t.Fatalf("after a kept part frame: %+v", got)
	}
	if done.Text != "!" {
		t.Fatal("the frame's part was written to")
	}
	m := c.View().Messages[0]
	m.Revision, m.State = 2, MessageDone
	m.Parts = []Part{done}
	m.Parts[0].Text = ""
	c.handleBytes(encodeEvent(framesEvent(Frame{Seq: 4, Kind: FrameMessage, Message: &m, Kept: []KeptLen{{"p1", 12}}})))
	if got := c.View().Messages[0]; got.Revision != 2 || got.Parts[0].Text != "hello world!" {
		t.Fatalf("after a kept message frame: revision %d, %q", got.Revision, got.Parts[0].Text)
	}

	// A frame ignored anyway needs no text: one for the done message.
	c.handleBytes(encodeEvent(framesEvent(Frame{Seq: 5, Kind: FramePart, MessageID: "m1", Revision: 2, Part: &done, Kept: []KeptLen{{"p1", 99}}})))
	if c.Status() != StatusLive || c.View().Messages[0].Parts[0].Text != "hello world!" {
		t.Fatalf("a kept part frame for a done message: %s, %q", c.Status(), c.View().Messages[0].Parts[0].Text)
	}

	internal := Message{MessageID: "m7", SessionID: "s", Sequence: 7, Revision: 1, Role: RoleAgent, State: MessageDone,
		Visibility: VisibilityInternal, CreatedAt: 7, Parts: []Part{{PartID: "p1", Sequence: 1, Type: PartText, State: StateDone, Text: "!"}}}
	for _, tc := range []struct {
		name string
		f    Frame
		want string // the status after it
	}{
		{"a frame ignored anyway: an internal message", Frame{Kind: FrameMessage, Message: &internal, Kept: []KeptLen{{"p1", 99}}}, StatusLive},
		{"a length the client does not hold", Frame{Kind: FramePart, MessageID: "m1", Revision: 2, Part: &done, Kept: []KeptLen{{"p1", 5}}}, StatusBackoff},
		{"a frame ignored anyway: a message the client does not hold", Frame{Kind: FramePart, MessageID: "m9", Revision: 1, Part: &done, Kept: []KeptLen{{"p1", 12}}}, StatusLive},
		{"kept on a delta", Frame{Kind: FrameDelta, MessageID: "m1", Revision: 2, PartID: "p1", Offset: 12, Text: "?", Kept: []KeptLen{{"p1", 12}}}, StatusBackoff},
		{"kept naming another part", Frame{Kind: FramePart, MessageID: "m1", Revision: 2, Part: &done, Kept: []KeptLen{{"p2", 12}}}, StatusBackoff},
	} {
		c := liveClientWithText(t, "hello")
		tc.f.Seq = 2
		c.handleBytes(encodeEvent(framesEvent(tc.f)))
		if c.Status() != tc.want {
			t.Errorf("%s: status %s, want %s", tc.name, c.Status(), tc.want)
		}
	}
}
