package synccore

import (
	"sort"
	"strings"
)

// Mirror is a host's copy of the view's messages, patched with Changes
// (TakeChanges) instead of re-read: text that grew is appended to a
// builder, so following a long answer costs O(delta) per delta. Each Apply
// returns a new slice in which a changed message is a new value with its
// own Parts slice and an unchanged one is copied as it was (its Parts slice
// shared), so a reader that keeps an older slice sees it unchanged.
// The zero value is an empty mirror. It is not safe for concurrent use.
type Mirror struct {
	msgs  []Message
	texts map[textKey]*strings.Builder // text of parts that grew, by message and part index
	// private: msgs is the mirror's own copy, not handed out since it was
	// made, so Patch may change it in place.
	private bool
}

type textKey struct {
	messageID string
	index     int
}

// Messages is the current list, oldest first (shared: do not modify).
func (m *Mirror) Messages() []Message { return m.msgs }

// Apply patches the mirror with ch and returns the new list: Patch, then
// Publish.
func (m *Mirror) Apply(ch Changes) ([]Message, error) {
	if err := m.Patch(ch); err != nil {
		return m.msgs, err
	}
	return m.Publish(), nil
}

// Publish hands out the current list: the next Patch copies it before
// changing anything, so the list handed out never changes.
func (m *Mirror) Publish() []Message {
	m.private = false
	return m.msgs
}

// Patch patches the mirror with ch without handing out a list: a host that
// takes several Changes between two views (a burst of frames) copies the
// list once, at the first Patch after a Publish. A change that does not
// fit the mirror (a patch of a message it lacks, a part index out of
// range) is an internal error: the mirror then holds what it had (or,
// patched in place, what it had with the messages before the bad one
// patched), and the host must start over from a Reset.
func (m *Mirror) Patch(ch Changes) error {
	if ch.Reset {
		msgs := make([]Message, 0, len(ch.Messages))
		for _, mc := range ch.Messages {
			if mc.Message == nil {
				return Errorf(CodeInternal, "changes: reset without the whole message %q", mc.MessageID)
			}
			msgs = append(msgs, *mc.Message)
		}
		m.msgs, m.texts, m.private = msgs, nil, true
		return nil
	}
	if len(ch.Messages) == 0 {
		return nil
	}
	msgs := m.msgs
	if !m.private {
		msgs = make([]Message, len(m.msgs), len(m.msgs)+len(ch.Messages))
		copy(msgs, m.msgs)
	}
	for _, mc := range ch.Messages {
		i := findMessage(msgs, mc.MessageID)
		if mc.Message != nil {
			if i >= 0 {
				m.dropTexts(mc.MessageID, len(msgs[i].Parts))
				msgs[i] = *mc.Message
				continue
			}
			at := sort.Search(len(msgs), func(j int) bool { return msgs[j].Sequence >= mc.Message.Sequence })
			msgs = append(msgs, Message{})
			copy(msgs[at+1:], msgs[at:])
			msgs[at] = *mc.Message
			continue
		}
		if i < 0 {
			return Errorf(CodeInternal, "changes: patch of message %q the host does not hold", mc.MessageID)
		}
		msg, err := m.patch(msgs[i], mc)
		if err != nil {
			return err
		}
		msgs[i] = msg
	}
	m.msgs, m.private = msgs, true
	return nil
}

// patch returns msg with mc's parts and appends applied, as a new value.
func (m *Mirror) patch(msg Message, mc MessageChange) (Message, error) {
	parts := make([]Part, len(msg.Parts), len(msg.Parts)+len(mc.Parts))
	copy(parts, msg.Parts)
	for _, pc := range mc.Parts {
		switch {
		case pc.Index < len(parts):
			parts[pc.Index] = pc.Part
			delete(m.texts, textKey{msg.MessageID, pc.Index})
		case pc.Index == len(parts):
			parts = append(parts, pc.Part)
		default:
			return msg, Errorf(CodeInternal, "changes: part %d of message %q, which has %d", pc.Index, msg.MessageID, len(parts))
		}
	}
	for _, a := range mc.Appends {
		if a.Index < 0 || a.Index >= len(parts) {
			return msg, Errorf(CodeInternal, "changes: text appended to part %d of message %q, which has %d", a.Index, msg.MessageID, len(parts))
		}
		parts[a.Index].Text = m.grow(textKey{msg.MessageID, a.Index}, parts[a.Index].Text, a.Text)
	}
	msg.Parts = parts
	return msg, nil
}

// grow appends add to text through the part's builder: amortised O(add),
// and the strings handed out earlier stay valid (a builder only appends).
func (m *Mirror) grow(k textKey, text, add string) string {
	b := m.texts[k]
	if b == nil {
		if m.texts == nil {
			m.texts = map[textKey]*strings.Builder{}
		}
		b = &strings.Builder{}
		b.Grow(max(2*(len(text)+len(add)), 256))
		b.WriteString(text)
		m.texts[k] = b
	}
	b.WriteString(add)
	return b.String()
}

func (m *Mirror) dropTexts(messageID string, parts int) {
	for i := range parts {
		delete(m.texts, textKey{messageID, i})
	}
}

// findMessage returns the index of the message with id, or -1. It scans
// from the end: changes are almost always to the newest messages.
func findMessage(msgs []Message, id string) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].MessageID == id {
			return i
		}
	}
	return -1
}
