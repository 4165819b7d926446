package natsfan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentsync/agentsync/synccore"
)

// mirror is what a follower knows of a session it does not serve: the
// state a subscriber joining now must start from. It is rebuilt from the
// owner's snapshot and kept up by every batch after it, as the owner's
// own state is by the turn (session.agentMsg): the head sequence, the
// streaming agent message's last committed revision (open), and the parts
// changed since that revision (streamed), whose part frames are the
// mid-stream join projection.
type mirror struct {
	sessionID string
	head      int64
	open      *synccore.Message // nil when no agent message is streaming
	streamed  []*mirrorPart     // in part sequence order
}

// mirrorPart is one part changed since the open message's committed
// revision. Streaming text lives in a builder (a long answer costs
// O(length)).
type mirrorPart struct {
	messageID string
	revision  int64
	p         synccore.Part
	text      strings.Builder
}

// apply folds frames into the mirror. An error means the frames do not
// fit what the mirror holds (a delta at the wrong offset, for a part it
// does not know): frames were lost, and the follow must end.
func (m *mirror) apply(frames []synccore.Frame) error {
	for i := range frames {
		if err := m.applyOne(&frames[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *mirror) applyOne(f *synccore.Frame) error {
	switch f.Kind {
	case synccore.FrameHello:
		m.head = f.HeadSequence
	case synccore.FrameMessage:
		msg := f.Message
		if msg == nil {
			return fmt.Errorf("natsfan: a message frame without its message")
		}
		m.head = max(m.head, msg.Sequence)
		// A committed revision holds every part streamed before it.
		m.streamed = slices.DeleteFunc(m.streamed, func(p *mirrorPart) bool { return p.messageID == msg.MessageID })
		switch {
		case msg.Role == synccore.RoleAgent && msg.State == synccore.MessageStreaming:
			m.open = msg
		case m.open != nil && m.open.MessageID == msg.MessageID:
			m.open = nil
		}
	case synccore.FramePart:
		if f.Part == nil {
			return fmt.Errorf("natsfan: a part frame without its part")
		}
		mp := m.part(f.MessageID, f.Part.PartID)
		if mp == nil {
			mp = &mirrorPart{messageID: f.MessageID}
			m.streamed = append(m.streamed, mp)
		}
		mp.revision, mp.p = f.Revision, *f.Part
		mp.text.Reset()
		mp.text.WriteString(f.Part.Text)
	case synccore.FrameDelta:
		mp := m.part(f.MessageID, f.PartID)
		if mp == nil {
			if mp = m.fromOpen(f.MessageID, f.PartID); mp == nil {
				return fmt.Errorf("natsfan: a delta for part %q of message %q, which is not streaming here", f.PartID, f.MessageID)
			}
			m.streamed = append(m.streamed, mp)
		}
		if int64(mp.text.Len()) != f.Offset {
			return fmt.Errorf("natsfan: a delta at offset %d of part %q, which holds %d bytes", f.Offset, f.PartID, mp.text.Len())
		}
		mp.revision = f.Revision
		mp.text.WriteString(f.Text)
	}
	return nil
}

func (m *mirror) part(messageID, partID string) *mirrorPart {
	for _, p := range m.streamed {
		if p.messageID == messageID && p.p.PartID == partID {
			return p
		}
	}
	return nil
}

// fromOpen starts tracking a part of the open message as committed: a
// delta after a mid-stream commit goes on from the committed text.
func (m *mirror) fromOpen(messageID, partID string) *mirrorPart {
	if m.open == nil || m.open.MessageID != messageID {
		return nil
	}
	for _, p := range m.open.Parts {
		if p.PartID == partID {
			mp := &mirrorPart{messageID: messageID, revision: m.open.Revision, p: p}
			mp.text.WriteString(p.Text)
			return mp
		}
	}
	return nil
}

// join is what a subscriber joining now gets first: hello, then one part
// frame per part streamed since the open message's committed revision
// (as session's projectionFrames). The part values are fresh copies.
func (m *mirror) join() []synccore.Frame {
	frames := make([]synccore.Frame, 0, 1+len(m.streamed))
	frames = append(frames, synccore.Frame{
		Kind:         synccore.FrameHello,
		Protocol:     synccore.ProtocolVersion,
		SessionID:    m.sessionID,
		HeadSequence: m.head,
	})
	ordered := slices.Clone(m.streamed)
	slices.SortStableFunc(ordered, func(a, b *mirrorPart) int { return int(a.p.Sequence - b.p.Sequence) })
	for _, mp := range ordered {
		p := mp.p
		p.Text = mp.text.String()
		frames = append(frames, synccore.Frame{Kind: synccore.FramePart, MessageID: mp.messageID, Revision: mp.revision, Part: &p})
	}
	return frames
}
