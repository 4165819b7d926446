package synccore

import (
	"sort"
	"strconv"
)

// apply.go merges message, part and delta frames into the window under the
// rules of docs/protocol.md §4.2: a message by message_id + revision (done is
// final), part and delta only on the exact revision they were made from.
//
// A message the client does not hold is outside its window: frame numbering
// proves the stream continuous, so the message frame of any message created
// after the subscription was seen. Its part and delta frames are ignored
// (it comes with load_older, or was filtered as internal).

// applyMessage merges a committed revision.
func (c *Client) applyMessage(m *Message) {
	if m.SessionID != c.sessionID {
		c.fail(Errorf(CodeMalformed, "message %q belongs to session %q, not %q", m.MessageID, m.SessionID, c.sessionID))
		return
	}
	// Sequences are gapless, so the session has created at least
	// m.Sequence messages: total counts internal ones too, even when they
	// are filtered from the window, and a frame seen twice counts once.
	c.total = max(c.total, m.Sequence)
	if m.Visibility == VisibilityInternal && !c.includeInternal {
		return
	}
	if e := c.byID[m.MessageID]; e != nil {
		if e.done() || m.Revision <= e.meta.Revision {
			return // stale, duplicate, or a change to a done message: ignored
		}
		if err := validateTransition(e.committedShape(), *m); err != nil {
			c.fail(errf(err, "message frame"))
			return
		}
		e.setCommitted(m)
		c.touch(e)
		return
	}
	if len(c.win) > 0 && m.Sequence < c.win[0].meta.Sequence {
		c.noteOlder(m)
		return
	}
	i := sort.Search(len(c.win), func(i int) bool { return c.win[i].meta.Sequence >= m.Sequence })
	if i < len(c.win) && c.win[i].meta.Sequence == m.Sequence {
		c.fail(Errorf(CodeSequenceChanged, "message %q has sequence %d, already held by %q", m.MessageID, m.Sequence, c.win[i].meta.MessageID))
		return
	}
	e := newEntry(m)
	c.win = append(c.win, nil)
	copy(c.win[i+1:], c.win[i:])
	c.win[i] = e
	c.byID[m.MessageID] = e
	c.winGen++
	c.touch(e)
}

// noteOlder remembers the newest revision of a message older than the
// window while an older page is being read: the page may have been read
// before that revision was committed.
func (c *Client) noteOlder(m *Message) {
	if c.olderReq == 0 && c.olderTimer == 0 {
		return
	}
	if c.olderSeen == nil {
		c.olderSeen = map[string]*Message{}
	}
	if old := c.olderSeen[m.MessageID]; old == nil || old.Revision < m.Revision {
		c.olderSeen[m.MessageID] = m
	}
}

// revisionCheck classifies a part/delta frame against the held message:
// apply, ignore (stale, or outside the window) or gap.
func (c *Client) revisionCheck(e *entry, rev int64) (apply bool) {
	switch {
	case e == nil:
		return false
	case rev < e.meta.Revision:
		return false // a commit overtook it
	case rev > e.meta.Revision:
		c.resync("gap: frame for revision "+itoa(rev)+" of "+e.meta.MessageID+", client holds "+itoa(e.meta.Revision), false, true)
		return false
	case e.done():
		return false // done is final
	}
	return true
}

// applyPart sets one part of a streaming projection.
func (c *Client) applyPart(f *Frame) {
	e := c.byID[f.MessageID]
	if !c.revisionCheck(e, f.Revision) {
		return
	}
	p := f.Part
	if e.meta.Role != RoleAgent {
		c.fail(Errorf(CodeInvalidPart, "part frame %d for user message %q", f.Seq, f.MessageID))
		return
	}
	if i := e.findPart(p.PartID); i >= 0 {
		old := &e.parts[i]
		if old.Sequence != p.Sequence || old.Type != p.Type {
			c.fail(Errorf(CodeSequenceChanged, "part frame %d: part %q changed sequence or type", f.Seq, p.PartID))
			return
		}
		e.setPart(i, p)
	} else {
		if p.Sequence != int64(len(e.parts)+1) {
			c.resync("gap: part "+p.PartID+" has sequence "+itoa(p.Sequence)+", expected "+itoa(int64(len(e.parts)+1)), false, true)
			return
		}
		e.parts = append(e.parts, *p)
	}
	c.touch(e)
}

// applyDelta appends text to a streaming text or reasoning part. Ids and
// text alias the input bytes; nothing here allocates unless the part's
// buffer must grow.
func (c *Client) applyDelta(msgID []byte, rev int64, partID []byte, offset int64, text []byte) {
	e := c.entryBytes(msgID)
	if !c.revisionCheck(e, rev) {
		return
	}
	i := e.findPartBytes(partID)
	if i < 0 {
		c.resync("gap: delta for unknown part "+string(partID)+" of "+string(msgID), false, true)
		return
	}
	if t := e.parts[i].Type; t != PartText && t != PartReasoning {
		c.fail(Errorf(CodeInvalidPart, "delta for %s part %q", t, e.parts[i].PartID))
		return
	}
	have := int64(e.textLen(i))
	switch {
	case offset == have:
		if len(text) == 0 {
			return
		}
		e.appendText(i, text)
		c.touch(e)
	case offset+int64(len(text)) <= have:
		// a duplicate of text already held: ignored
	default:
		c.resync("gap: delta at offset "+itoa(offset)+" of part "+string(partID)+", client holds "+itoa(have)+" bytes", false, true)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
