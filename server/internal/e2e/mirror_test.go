package e2e

import (
	"fmt"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// mirror rebuilds messages from subscription frames alone, checking the
// rules of docs/protocol.md §4.2 strictly: a delta must land exactly at the
// end of its part's text at the revision it names. It is deliberately
// independent of synccore.Client so the server is checked on its own.
type mirror struct {
	t     testing.TB
	msgs  map[string]*synccore.Message
	hello *synccore.Frame
	// joinedText is the text of streaming parts as first seen in part
	// frames (what a mid-stream joiner received before any delta).
	joinedText map[string]string
	deltas     int
}

func newMirror(t testing.TB) *mirror {
	return &mirror{t: t, msgs: map[string]*synccore.Message{}, joinedText: map[string]string{}}
}

// apply applies frames and fails the test on any rule broken. Call it
// from the test goroutine; other goroutines use try.
func (m *mirror) apply(frames []synccore.Frame) {
	m.t.Helper()
	if err := m.try(frames); err != nil {
		m.t.Fatal(err)
	}
}

// try applies frames and reports the first rule broken.
func (m *mirror) try(frames []synccore.Frame) error {
	for i := range frames {
		f := frames[i]
		switch f.Kind {
		case synccore.FrameHello:
			if m.hello != nil {
				return fmt.Errorf("second hello")
			}
			if f.Seq != 1 || f.Protocol != synccore.ProtocolVersion || f.SessionID == "" {
				return fmt.Errorf("bad hello %+v", f)
			}
			m.hello = &f
		case synccore.FrameMessage:
			cur, ok := m.msgs[f.Message.MessageID]
			if ok && cur.Revision >= f.Message.Revision {
				continue
			}
			if ok && cur.Done() && cur.Revision > 0 {
				return fmt.Errorf("message %s changed after done (rev %d -> %d)", cur.MessageID, cur.Revision, f.Message.Revision)
			}
			cp := *f.Message
			cp.Parts = append([]synccore.Part(nil), f.Message.Parts...)
			m.msgs[cp.MessageID] = &cp
		case synccore.FramePart:
			msg := m.msgs[f.MessageID]
			if msg == nil {
				// Joined mid-stream without a snapshot: hold a projection.
				msg = &synccore.Message{MessageID: f.MessageID, Revision: f.Revision, Role: synccore.RoleAgent, State: synccore.MessageStreaming}
				m.msgs[f.MessageID] = msg
			}
			if f.Revision < msg.Revision {
				continue // stale: a commit overtook it
			}
			if f.Revision > msg.Revision {
				return fmt.Errorf("part frame at revision %d, mirror holds %d: gap", f.Revision, msg.Revision)
			}
			if _, seen := m.joinedText[f.Part.PartID]; !seen {
				m.joinedText[f.Part.PartID] = f.Part.Text
			}
			setPart(msg, *f.Part)
		case synccore.FrameDelta:
			msg := m.msgs[f.MessageID]
			if msg == nil {
				return fmt.Errorf("delta for unknown message %s", f.MessageID)
			}
			if f.Revision < msg.Revision {
				continue
			}
			if f.Revision > msg.Revision {
				return fmt.Errorf("delta at revision %d, mirror holds %d", f.Revision, msg.Revision)
			}
			p := findPart(msg, f.PartID)
			if p == nil {
				return fmt.Errorf("delta for unknown part %s", f.PartID)
			}
			if int64(len(p.Text)) != f.Offset {
				return fmt.Errorf("delta offset %d, part %s has %d bytes", f.Offset, f.PartID, len(p.Text))
			}
			p.Text += f.Text
			m.deltas++
		case synccore.FrameResync, synccore.FrameError:
		default:
			return fmt.Errorf("unknown frame kind %q", f.Kind)
		}
	}
	return nil
}

func setPart(msg *synccore.Message, p synccore.Part) {
	for i := range msg.Parts {
		if msg.Parts[i].PartID == p.PartID {
			msg.Parts[i] = p
			return
		}
	}
	msg.Parts = append(msg.Parts, p)
}

func findPart(msg *synccore.Message, id string) *synccore.Part {
	for i := range msg.Parts {
		if msg.Parts[i].PartID == id {
			return &msg.Parts[i]
		}
	}
	return nil
}

// textOf concatenates a message's text parts.
func textOf(msg synccore.Message) string {
	s := ""
	for _, p := range msg.Parts {
		if p.Type == synccore.PartText {
			s += p.Text
		}
	}
	return s
}
