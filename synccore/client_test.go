package synccore

import (
	"errors"
	"testing"
)

// TestViewIsACopy: what View and Message hand out is the caller's to keep
// and change; the client's window does not move with it.
func TestViewIsACopy(t *testing.T) {
	c := liveClient(t, agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, "abc")))
	v := c.View()
	v.Messages[0].Parts[0].Text = "zzz"
	v.Messages[0].Parts = append(v.Messages[0].Parts, textPart("x", 2, StateDone, "x"))
	m, _ := c.Message("m1")
	m.Parts[0].PartID = "changed"
	mustHandle(t, c, framesEvent(Frame{Seq: 2, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: 3, Text: "d"}))
	got, _ := c.Message("m1")
	if len(got.Parts) != 1 || got.Parts[0].PartID != "p1" || got.Parts[0].Text != "abcd" {
		t.Fatalf("the window changed with the caller's copy: %+v", got.Parts)
	}
}

// TestHostPageIsNotShared: a page handed over decoded (Event.Page) stays
// the host's; the client keeps its own copy.
func TestHostPageIsNotShared(t *testing.T) {
	c := NewClient(Options{})
	mustHandle(t, c, Event{Type: EvStart, SessionID: "s1"})
	mustHandle(t, c, framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	p := &MessagePage{Items: []Message{agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, "abc"))}, Total: 1}
	mustHandle(t, c, Event{Type: EvPage, RequestID: 1, Page: p})
	p.Items[0].Parts[0].Text = "host scribbles"
	if m, _ := c.Message("m1"); m.Parts[0].Text != "abc" {
		t.Fatalf("client shares the host's page: %q", m.Parts[0].Text)
	}
}

// TestReReadAlwaysMovesBack: a server whose pages do not move back cannot
// keep the client reading forever.
func TestReReadAlwaysMovesBack(t *testing.T) {
	c := liveClient(t, agentMsg("m1", 1, 1, MessageStreaming), userMsg("m2", 2, "x"))
	mustHandle(t, c, Event{Type: EvConnectionLost})
	mustHandle(t, c, Event{Type: EvTimerFired, TimerID: c.timer})
	mustHandle(t, c, framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	bad := MessagePage{Items: []Message{userMsg("m3", 3, "y")}, Total: 3, HasMore: true, NextBeforeSequence: 3}
	mustHandle(t, c, pageEvent(c.headReq, bad)) // asks for before 3
	mustHandle(t, c, pageEvent(c.headReq, bad)) // before 3 again: stop here
	if c.status != StatusLive {
		t.Fatalf("status %s, want live", c.status)
	}
}

func TestOverlappingPagesNoDuplicates(t *testing.T) {
	c := liveClient(t, agentMsg("m1", 1, 1, MessageStreaming), userMsg("m2", 2, "x"))
	mustHandle(t, c, Event{Type: EvConnectionLost})
	mustHandle(t, c, Event{Type: EvTimerFired, TimerID: c.timer})
	mustHandle(t, c, framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	bad := MessagePage{Items: []Message{userMsg("m3", 3, "y")}, Total: 3, HasMore: true, NextBeforeSequence: 3}
	mustHandle(t, c, pageEvent(c.headReq, bad))
	mustHandle(t, c, pageEvent(c.headReq, bad))
	v := c.View()
	if len(v.Messages) != 3 || v.Messages[2].MessageID != "m3" {
		t.Fatalf("window %+v", v.Messages)
	}
}

func TestDuplicateIDInOnePage(t *testing.T) {
	dup := []Message{userMsg("m1", 1, "a"), userMsg("m1", 2, "b"), userMsg("m3", 3, "c")}
	c := liveClient(t, dup...)
	if v := c.View(); len(v.Messages) != 2 {
		t.Fatalf("window %+v", v.Messages)
	}
	mustHandle(t, c, Event{Type: EvConnectionLost})
	mustHandle(t, c, Event{Type: EvTimerFired, TimerID: c.timer})
	mustHandle(t, c, framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	mustHandle(t, c, pageEvent(c.headReq, MessagePage{Items: append(dup, userMsg("m4", 4, "d")), Total: 4}))
	if v := c.View(); len(v.Messages) != 3 {
		t.Fatalf("window after re-read %+v", v.Messages)
	}
}

// A server cannot make a client rebuild: an error frame that claims
// core_broken surfaces as internal.
func TestErrorFrameCannotClaimCoreBroken(t *testing.T) {
	c := liveClient(t)
	out, err := c.Handle(framesEvent(Frame{Seq: c.lastSeq + 1, Kind: FrameError, Code: CodeCoreBroken, Reason: "hostile"}))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeInternal {
		t.Fatalf("error %v, want code internal", err)
	}
	if len(out) == 0 {
		t.Fatal("no resync commands")
	}
}
