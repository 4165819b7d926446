package synccore

import (
	"cmp"
	"slices"
	"strings"
)

// Mirror is a host's copy of the view's messages, patched with Changes
// (TakeChanges) instead of re-read, at a cost that follows what changed,
// not the view:
//   - the list is a MessageList: a changed message is a new *Message with
//     its own Parts slice, and every other message (and almost every node
//     of the list) is shared with the previous list, which never changes;
//   - text that grows is appended to a builder per part. A streaming text
//     or reasoning part gets its builder, with room to grow, when it
//     arrives whole (a reset, a new message or part): that copy belongs to
//     a change that carried the whole text anyway, and no delta after it
//     copies the text before it, however long.
//
// The zero value is an empty mirror. It is not safe for concurrent use;
// the lists it hands out are.
type Mirror struct {
	list  MessageList
	index map[string]int               // each message's position in list, by id
	texts map[textKey]*strings.Builder // text of growing parts, by message and part index
}

type textKey struct {
	messageID string
	index     int
}

// Messages is the current list, oldest first.
func (m *Mirror) Messages() MessageList { return m.list }

// Apply patches the mirror with ch (Patch) and returns the new list.
func (m *Mirror) Apply(ch Changes) (MessageList, error) {
	err := m.Patch(ch)
	return m.list, err
}

// Patch patches the mirror with ch. A change that does not fit the mirror
// (a patch of a message it lacks, a part index out of range) is an
// internal error: the mirror then holds the changes before the bad one,
// and the host must start over from a Reset. The mirror keeps the
// messages of ch (and their Parts): the caller must not modify them.
func (m *Mirror) Patch(ch Changes) error {
	if ch.Reset {
		msgs := make([]*Message, 0, len(ch.Messages))
		for _, mc := range ch.Messages {
			if mc.Message == nil {
				return Errorf(CodeInternal, "changes: reset without the whole message %q", mc.MessageID)
			}
			msgs = append(msgs, mc.Message)
		}
		m.texts = nil
		for _, msg := range msgs {
			m.prepareTexts(msg)
		}
		m.setList(NewMessageList(msgs))
		return nil
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	// Messages older than the newest held (a page of history) are
	// inserted together at the end: one rebuild of the list, not one each.
	var older []*Message
	for _, mc := range ch.Messages {
		i, held := m.index[mc.MessageID]
		switch {
		case mc.Message != nil && held:
			if err := keepTexts(m.list.At(i), mc); err != nil {
				m.insert(older)
				return err
			}
			m.dropTexts(mc.MessageID, len(m.list.At(i).Parts))
			m.prepareTexts(mc.Message)
			m.list = m.list.set(i, mc.Message)
		case mc.Message != nil:
			if len(mc.KeptTexts) > 0 {
				m.insert(older)
				return Errorf(CodeInternal, "changes: kept texts of message %q the host does not hold", mc.MessageID)
			}
			m.prepareTexts(mc.Message)
			if n := m.list.Len(); n > 0 && mc.Message.Sequence < m.list.At(n-1).Sequence {
				older = append(older, mc.Message)
				continue
			}
			m.index[mc.MessageID] = m.list.Len()
			m.list = m.list.push(mc.Message)
		case !held:
			m.insert(older)
			return Errorf(CodeInternal, "changes: patch of message %q the host does not hold", mc.MessageID)
		default:
			msg, err := m.patch(m.list.At(i), mc)
			if err != nil {
				m.insert(older)
				return err
			}
			m.list = m.list.set(i, msg)
		}
	}
	m.insert(older)
	return nil
}

// insert merges msgs (oldest first) into the list by sequence.
func (m *Mirror) insert(msgs []*Message) {
	if len(msgs) == 0 {
		return
	}
	all := m.list.appendTo(make([]*Message, 0, m.list.Len()+len(msgs)))
	all = append(all, msgs...)
	slices.SortStableFunc(all, func(a, b *Message) int { return cmp.Compare(a.Sequence, b.Sequence) })
	m.setList(NewMessageList(all))
}

// setList replaces the list and indexes it.
func (m *Mirror) setList(l MessageList) {
	m.list = l
	m.index = make(map[string]int, l.Len())
	for i, msg := range l.All() {
		m.index[msg.MessageID] = i
	}
}

// patch returns msg with mc's parts and appends applied, as a new message.
func (m *Mirror) patch(msg *Message, mc MessageChange) (*Message, error) {
	c := *msg
	c.Parts = make([]Part, len(msg.Parts), len(msg.Parts)+len(mc.Parts))
	copy(c.Parts, msg.Parts)
	for _, pc := range mc.Parts {
		switch {
		case pc.Index >= 0 && pc.Index < len(c.Parts):
			if pc.KeptText {
				pc.Part.Text = c.Parts[pc.Index].Text + pc.Part.Text
			}
			c.Parts[pc.Index] = pc.Part
			delete(m.texts, textKey{msg.MessageID, pc.Index})
		case pc.KeptText:
			return msg, Errorf(CodeInternal, "changes: kept text of part %d of message %q, which has %d", pc.Index, msg.MessageID, len(c.Parts))
		case pc.Index == len(c.Parts):
			c.Parts = append(c.Parts, pc.Part)
		default:
			return msg, Errorf(CodeInternal, "changes: part %d of message %q, which has %d", pc.Index, msg.MessageID, len(c.Parts))
		}
		m.prepareText(textKey{msg.MessageID, pc.Index}, &c.Parts[pc.Index])
	}
	for _, a := range mc.Appends {
		if a.Index < 0 || a.Index >= len(c.Parts) {
			return msg, Errorf(CodeInternal, "changes: text appended to part %d of message %q, which has %d", a.Index, msg.MessageID, len(c.Parts))
		}
		c.Parts[a.Index].Text = m.grow(textKey{msg.MessageID, a.Index}, c.Parts[a.Index].Text, a.Text)
	}
	return &c, nil
}

// prepareTexts gives the streaming parts of a message that arrived whole
// their builders.
func (m *Mirror) prepareTexts(msg *Message) {
	for i := range msg.Parts {
		m.prepareText(textKey{msg.MessageID, i}, &msg.Parts[i])
	}
}

// prepareText gives p a builder holding its text if it is text that may
// still grow (a streaming text or reasoning part), and makes p.Text the
// builder's, so the copy the builder made is the only one kept.
func (m *Mirror) prepareText(k textKey, p *Part) {
	if p.State != StateStreaming || (p.Type != PartText && p.Type != PartReasoning) {
		return
	}
	b := newTextBuilder(p.Text, 0)
	if m.texts == nil {
		m.texts = map[textKey]*strings.Builder{}
	}
	m.texts[k] = b
	p.Text = b.String()
}

// grow appends add to text through the part's builder: amortised O(add),
// and the strings handed out earlier stay valid (a builder only appends).
// A part without one (text appended to a part not marked streaming) gets
// one now, at the cost of one copy of its text.
func (m *Mirror) grow(k textKey, text, add string) string {
	b := m.texts[k]
	if b == nil {
		if m.texts == nil {
			m.texts = map[textKey]*strings.Builder{}
		}
		b = newTextBuilder(text, len(add))
		m.texts[k] = b
	}
	b.WriteString(add)
	return b.String()
}

// newTextBuilder is a builder holding text with room for it to double.
func newTextBuilder(text string, more int) *strings.Builder {
	b := &strings.Builder{}
	b.Grow(max(2*(len(text)+more), 256))
	b.WriteString(text)
	return b
}

func (m *Mirror) dropTexts(messageID string, parts int) {
	for i := range parts {
		delete(m.texts, textKey{messageID, i})
	}
}

// keepTexts puts in front of the texts of mc.Message's parts that
// mc.KeptTexts names the text of the held part with the same id (protocol
// §7.4).
func keepTexts(held *Message, mc MessageChange) error {
	for _, id := range mc.KeptTexts {
		from, to := held.findPart(id), mc.Message.findPart(id)
		if from < 0 || to < 0 {
			return Errorf(CodeInternal, "changes: kept text of part %q that message %q lacks", id, mc.MessageID)
		}
		mc.Message.Parts[to].Text = held.Parts[from].Text + mc.Message.Parts[to].Text
	}
	return nil
}

// findPart returns the index of the part with the given id, or -1.
func (m *Message) findPart(id string) int {
	for i := range m.Parts {
		if m.Parts[i].PartID == id {
			return i
		}
	}
	return -1
}
