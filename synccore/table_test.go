package synccore

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// table_test.go drives every cell of the transition table (table.go) with
// several variants of its event, and checks that the client does what the
// cell says: a reject or a closed error changes nothing, an ignore changes
// nothing and answers nothing, and every other action ends in one of the
// cell's statuses, each of which some variant reaches.

// clientIn builds a client in the given status, holding one message with
// older history behind it.
func clientIn(t *testing.T, status string) *Client {
	t.Helper()
	c := NewClient(Options{})
	switch status {
	case StatusIdle:
		return c
	case StatusConnecting:
		mustHandle(t, c, Event{Type: EvStart, SessionID: "s1"})
	case StatusSyncing:
		mustHandle(t, c, Event{Type: EvStart, SessionID: "s1"})
		mustHandle(t, c, framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	case StatusLive, StatusBackoff, StatusClosed:
		c = liveClient(t)
		p := MessagePage{Items: []Message{userMsg("m5", 5, "five")}, Total: 5, HasMore: true, NextBeforeSequence: 5}
		c.status = StatusSyncing
		mustHandle(t, c, Event{Type: EvSetIncludeInternal, IncludeInternal: true})
		mustHandle(t, c, pageEvent(c.headReq, p))
		if status == StatusBackoff {
			mustHandle(t, c, Event{Type: EvConnectionLost})
		}
		if status == StatusClosed {
			mustHandle(t, c, Event{Type: EvClose})
		}
	}
	if c.status != status {
		t.Fatalf("built %s, want %s", c.status, status)
	}
	return c
}

// variants returns events of one type worth trying on c.
func variants(c *Client, evType string) []Event {
	req := max(c.headReq, 1)
	switch evType {
	case EvFrames:
		return []Event{
			framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}),
			framesEvent(Frame{Seq: c.lastSeq + 1, Kind: FrameMessage, Message: ptr(userMsg("m9", 9, "new"))}),
			framesEvent(Frame{Seq: c.lastSeq + 7, Kind: FrameMessage, Message: ptr(userMsg("m9", 9, "new"))}),
		}
	case EvPage:
		return []Event{
			pageEvent(req, MessagePage{Items: []Message{userMsg("m5", 5, "five")}, Total: 5}),
			{Type: EvPage, RequestID: req, Data: []byte{0xc1}},
			pageEvent(999, MessagePage{Items: []Message{}}),
		}
	case EvPageFailed:
		return []Event{{Type: EvPageFailed, RequestID: req}, {Type: EvPageFailed, RequestID: 999}}
	case EvTimerFired:
		return []Event{{Type: EvTimerFired, TimerID: max(c.timer, 1)}, {Type: EvTimerFired, TimerID: 999}}
	case EvSetIncludeInternal:
		return []Event{{Type: evType, IncludeInternal: true}, {Type: evType, IncludeInternal: false}}
	case EvStart:
		return []Event{{Type: EvStart, SessionID: "s1"}}
	}
	return []Event{{Type: evType}}
}

func ptr[T any](v T) *T { return &v }

// snapshot is the observable state, to prove "nothing changed".
func snapshot(c *Client) []byte {
	b := c.viewBytes()
	return append(b, []byte(c.status)...)
}

func TestTransitionTable(t *testing.T) {
	for si, status := range statuses {
		for ei, evType := range events {
			cl := transitions[si][ei]
			reached := map[string]bool{}
			for vi, ev := range variants(clientIn(t, status), evType) {
				c := clientIn(t, status)
				ev = variants(c, evType)[vi]
				before := snapshot(c)
				cmds, err := c.Handle(ev)
				var e *Error
				rejected := err != nil && cmds == nil
				switch cl.do {
				case doReject, doClosedError:
					want := CodeConflict
					if cl.do == doClosedError {
						want = CodeClosed
					}
					if !errors.As(err, &e) || e.Code != want || !rejected {
						t.Fatalf("%s x %s: got %v %v, want a %s error", status, evType, cmds, err, want)
					}
				case doIgnore:
					if err != nil || len(cmds) != 0 {
						t.Fatalf("%s x %s: ignore answered %v %v", status, evType, cmds, err)
					}
				default:
					if rejected {
						t.Fatalf("%s x %s (variant %d): rejected: %v", status, evType, vi, err)
					}
				}
				if cl.do == doReject || cl.do == doClosedError || cl.do == doIgnore {
					if !bytes.Equal(before, snapshot(c)) {
						t.Fatalf("%s x %s: state changed by a %s cell", status, evType, cl.do)
					}
				}
				if !slices.Contains(cl.next, c.status) {
					t.Fatalf("%s x %s (variant %d): ended %s, table allows %v", status, evType, vi, c.status, cl.next)
				}
				reached[c.status] = true
			}
			for _, n := range cl.next {
				if !reached[n] {
					t.Errorf("%s x %s: no variant reached %s", status, evType, n)
				}
			}
		}
	}
}

// TestTableComplete checks the table has a cell for every status and event
// and that Handle refuses an event type outside it.
func TestTableComplete(t *testing.T) {
	for si := range statuses {
		for ei := range events {
			if len(transitions[si][ei].next) == 0 {
				t.Fatalf("cell %s x %s has no next status", statuses[si], events[ei])
			}
		}
	}
	_, err := NewClient(Options{}).Handle(Event{Type: "teleport"})
	if !errors.Is(err, &Error{Code: CodeUnknownEvent}) {
		t.Fatalf("unknown event: %v", err)
	}
}
