package synccore

import "testing"

// helpers_test.go builds sessions for the internal tests.

func userMsg(id string, seq int64, text string) Message {
	return Message{MessageID: id, SessionID: "s1", Sequence: seq, Revision: 1, Role: RoleUser,
		Visibility: VisibilityVisible, CreatedAt: 1000 + seq,
		Parts: []Part{{PartID: id + "-p1", Sequence: 1, Type: PartText, Text: text}}}
}

func agentMsg(id string, seq, rev int64, state MessageState, parts ...Part) Message {
	return Message{MessageID: id, SessionID: "s1", Sequence: seq, Revision: rev, Role: RoleAgent,
		State: state, TurnID: "t1", Visibility: VisibilityVisible, CreatedAt: 1000 + seq, Parts: parts}
}

func textPart(id string, seq int64, state PartState, text string) Part {
	return Part{PartID: id, Sequence: seq, Type: PartText, State: state, Text: text, StepID: "st1"}
}

func framesEvent(frames ...Frame) Event {
	return Event{Type: EvFrames, Data: encodeFrames(frames)}
}

func pageEvent(req uint64, p MessagePage) Event {
	return Event{Type: EvPage, RequestID: req, Data: encodePage(p)}
}

func mustHandle(t testing.TB, c *Client, ev Event) []Command {
	t.Helper()
	cmds, err := c.Handle(ev)
	if err != nil {
		t.Fatalf("handle %s: %v", ev.Type, err)
	}
	return cmds
}

// liveClient starts a client and brings it live on a head page of msgs.
func liveClient(t testing.TB, msgs ...Message) *Client {
	t.Helper()
	c := NewClient(Options{})
	mustHandle(t, c, Event{Type: EvStart, SessionID: "s1"})
	mustHandle(t, c, framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	p := MessagePage{Items: msgs, Total: int64(len(msgs))}
	if len(msgs) > 0 {
		p.StartSequence, p.EndSequence = msgs[0].Sequence, msgs[len(msgs)-1].Sequence
	}
	mustHandle(t, c, pageEvent(c.headReq, p))
	if c.status != StatusLive {
		t.Fatalf("status %s, want live", c.status)
	}
	return c
}
