package synccore

import (
	"bytes"
	"testing"
)

// handleChanges runs ev through appendHandleChanges (the one-call path of
// ABI v3) in the property test's histories: its Output must be
// handleBytes' (nil only for a render of one message), and the changes it
// took, patched into the mirror, must give the view.
func (h *simHost) handleChanges(ev Event) ([]Command, error) {
	prefix := []byte("kept") // the result is appended: what dst held stays
	b, outLen := h.c.appendHandleChanges(append([]byte{}, prefix...), encodeEvent(ev))
	if !bytes.HasPrefix(b, prefix) {
		h.t.Fatalf("step %d: appendHandleChanges overwrote dst", h.steps)
	}
	return h.takeHandleChanges(b[len(prefix):], outLen)
}

// handleCompact runs ev through appendHandleCompact (ABI v4): a compact
// answer stands for the take "this text appended to part i of the message
// the last take appended to alone, the scalars unchanged", which is
// patched into the mirror like any take and must give the view too.
func (h *simHost) handleCompact(ev Event) ([]Command, error) {
	raw := encodeEvent(ev)
	prefix := []byte("kept")
	b, outLen, compact := h.c.appendHandleCompact(append([]byte{}, prefix...), raw)
	if !bytes.HasPrefix(b, prefix) {
		h.t.Fatalf("step %d: appendHandleCompact overwrote dst", h.steps)
	}
	if compact == 0 {
		return h.takeHandleChanges(b[len(prefix):], outLen)
	}
	if len(b) != len(prefix) || outLen != 0 {
		h.t.Fatalf("step %d: a compact answer with %d bytes", h.steps, len(b)-len(prefix))
	}
	id := h.compactID
	if id == "" {
		h.t.Fatalf("step %d: a compact answer after a take that was not one append", h.steps)
	}
	i, at := splitCompact(compact)
	h.stats["changes: compact"]++
	ch := h.lastTake
	ch.Messages = []MessageChange{{MessageID: id, Appends: []TextAppend{{Index: i, Text: string(raw[at:])}}}}
	h.applyChanges(ch)
	h.compactID = id
	return []Command{{Type: CmdRender, MessageIDs: []string{id}}}, nil
}

// takeHandleChanges checks and applies the answer of appendHandleChanges
// (b, whose Output is outLen bytes long).
func (h *simHost) takeHandleChanges(b []byte, outLen int) ([]Command, error) {
	hc, err := decodeHandleChanges(b)
	if err != nil {
		h.t.Fatalf("step %d: decode handle_changes: %v", h.steps, err)
	}
	if hc.Changes == nil {
		h.t.Fatalf("step %d: no changes from a healthy client", h.steps)
	}
	var out Output
	if hc.Output != nil {
		out = *hc.Output
		if !bytes.Equal(b[:outLen], encodeOutput(out)) {
			h.t.Fatalf("step %d: the Output's %d bytes are not its encoding", h.steps, outLen)
		}
	} else {
		if outLen != 1 {
			h.t.Fatalf("step %d: a nil Output of %d bytes", h.steps, outLen)
		}
		// Only a render of one message is left out: the changes say it.
		out.Commands = []Command{{Type: CmdRender, MessageIDs: []string{"(in the changes)"}}}
	}
	appendsForm := b[outLen]&0xf0 == 0x90
	if appendsForm {
		h.stats["changes: appends form"]++
	}
	h.applyChanges(*hc.Changes)
	// The base of the next compact answer, as a host notes it: the only
	// append of a take in the appends form after a nil Output.
	if ms := hc.Changes.Messages; appendsForm && hc.Output == nil && len(ms) == 1 && len(ms[0].Appends) == 1 {
		h.compactID = ms[0].MessageID
	}
	if out.Error != nil {
		return out.Commands, out.Error
	}
	return out.Commands, nil
}

// TestHandleChangesForms checks the two forms of the take on a live client:
// a delta gives the appends form (no Output, the appended text only), a
// part frame the Changes map with the whole part.
func TestHandleChangesForms(t *testing.T) {
	c := liveClientWithText(t, "hello")
	b, outLen := c.appendHandleChanges(nil, encodeEvent(framesEvent(Frame{Seq: 2, Kind: FrameDelta, MessageID: "m1", Revision: 1,
		PartID: "p1", Offset: 5, Text: " world"})))
	if outLen != 1 || b[0] != 0xc0 {
		t.Fatalf("a delta's Output: %x, want nil", b[:outLen])
	}
	want := []byte{0x97, 0xa4, 'l', 'i', 'v', 'e', 1, 0, 0, 0xa2, 'm', '1', 0}
	want = append(append(want, 0xa6), " world"...)
	if !bytes.Equal(b[1:], want) {
		t.Fatalf("appends form %x, want %x", b[1:], want)
	}
	hc, err := decodeHandleChanges(b)
	if err != nil || hc.Output != nil || len(hc.Changes.Messages) != 1 || hc.Changes.Messages[0].Appends[0].Text != " world" ||
		hc.Changes.Status != StatusLive || hc.Changes.Total != 1 {
		t.Fatalf("decoded %+v, %v", hc.Changes, err)
	}
	part := Part{PartID: "p1", Sequence: 1, Type: PartText, StepID: "s1", State: StateDone, Text: "hello world!"}
	b, _ = c.appendHandleChanges(nil, encodeEvent(framesEvent(Frame{Seq: 3, Kind: FramePart, MessageID: "m1", Revision: 1, Part: &part})))
	hc, err = decodeHandleChanges(b)
	// The host holds "hello world": the part comes without it (kept_text).
	if err != nil || hc.Changes == nil || len(hc.Changes.Messages) != 1 || len(hc.Changes.Messages[0].Parts) != 1 ||
		hc.Changes.Messages[0].Parts[0].Part.Text != "!" || !hc.Changes.Messages[0].Parts[0].KeptText {
		t.Fatalf("a part frame's take: %+v, %v", hc.Changes, err)
	}
	// Nothing changed since: the appends form with no appends.
	b, _ = c.appendHandleChanges(nil, encodeEvent(Event{Type: EvTimerFired, TimerID: 99}))
	if hc, err = decodeHandleChanges(b); err != nil || hc.Changes == nil || len(hc.Changes.Messages) != 0 {
		t.Fatalf("an empty take: %x: %+v, %v", b, hc, err)
	}
}

// TestHandleChangesBroken checks that a client that panics while its
// changes are taken answers a core_broken Output and nil changes.
func TestHandleChangesBroken(t *testing.T) {
	c := liveClientWithText(t, "hello")
	c.dirty = []*entry{nil, nil} // a torn client: taking its changes panics
	b, outLen := c.appendHandleChanges(nil, encodeEvent(Event{Type: EvTimerFired, TimerID: 99}))
	hc, err := decodeHandleChanges(b)
	if err != nil || hc.Output == nil || hc.Output.Error == nil || hc.Output.Error.Code != CodeCoreBroken || hc.Changes != nil ||
		b[outLen] != 0xc0 {
		t.Fatalf("a panicking client answered %x: %+v, %v", b, hc, err)
	}
}

// liveClientWithText is a live client holding one streaming agent message
// m1 whose text part p1 holds text, with the host's take done.
func liveClientWithText(t *testing.T, text string) *Client {
	t.Helper()
	c := NewClient(Options{})
	must := func(cmds []Command, err error) []Command {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return cmds
	}
	must(c.Handle(Event{Type: EvStart, SessionID: "s"}))
	must(c.Handle(Event{Type: EvSubscriptionOpened}))
	cmds := must(c.Handle(Event{Type: EvFrames, Data: encodeFrames([]Frame{{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s", HeadSequence: 1}})}))
	var req uint64
	for _, cmd := range cmds {
		if cmd.Type == CmdFetchPage {
			req = cmd.RequestID
		}
	}
	msg := Message{MessageID: "m1", SessionID: "s", Sequence: 1, Revision: 1, Role: RoleAgent, State: MessageStreaming,
		TurnID: "t1", Visibility: VisibilityVisible, CreatedAt: 1,
		Parts: []Part{{PartID: "p1", Sequence: 1, Type: PartText, StepID: "s1", State: StateStreaming, Text: text}}}
	must(c.Handle(Event{Type: EvPage, RequestID: req, Page: &MessagePage{Items: []Message{msg}, Total: 1, StartSequence: 1, EndSequence: 1}}))
	if c.Status() != StatusLive {
		t.Fatalf("status %s", c.Status())
	}
	c.TakeChanges()
	return c
}
