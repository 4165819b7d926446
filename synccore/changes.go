package synccore

import (
	"sort"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
)

// changes.go is the incremental render contract (ABI v2, docs/protocol.md
// §7.4): the client remembers what its host already holds of each message,
// and TakeChanges answers only what changed since the host's last take: a
// whole message when it is new or a committed revision replaced it, a whole
// part when it is new or a part frame replaced it, and for text that only
// grew, the appended bytes. A host that patches its own copy of the view
// with them pays O(delta) per delta, whatever the message's length; the
// render commands of Output only say that there is something to take.

// Changes is what changed in the view since the previous TakeChanges. The
// view's scalar fields are always given; Messages holds every changed
// message, oldest first. With Reset the host drops its messages and takes
// Messages (all of them, whole) as the new list.
type Changes struct {
	Status             string          `msgpack:"status" json:"status" codec:"shared"`
	Total              int64           `msgpack:"total" json:"total"`
	HasMoreOlder       bool            `msgpack:"has_more_older" json:"has_more_older"`
	NextBeforeSequence int64           `msgpack:"next_before_sequence,omitempty" json:"next_before_sequence,omitempty"`
	LoadingOlder       bool            `msgpack:"loading_older" json:"loading_older"`
	IncludeInternal    bool            `msgpack:"include_internal" json:"include_internal"`
	Reset              bool            `msgpack:"reset,omitempty" json:"reset,omitempty"`
	Messages           []MessageChange `msgpack:"messages" json:"messages"`
}

// MessageChange is one changed message: either Message (the whole message:
// insert it by sequence, or replace the held one), or a patch of the held
// message: Parts replaced or added (by index; an index equal to the held
// parts' count appends), then Appends to the text of held parts.
type MessageChange struct {
	MessageID string   `msgpack:"message_id" json:"message_id"`
	Message   *Message `msgpack:"message,omitempty" json:"message,omitempty"`
	// KeptTexts names the parts of Message sent without the beginning of
	// their text (ABI v4): a committed revision replaced a message the host
	// holds, and each of these parts' text begins with the held part's (the
	// one with the same part_id) text, which the host puts in front of the
	// text given.
	KeptTexts []string     `msgpack:"kept_texts,omitempty" json:"kept_texts,omitempty"`
	Parts     []PartChange `msgpack:"parts,omitempty" json:"parts,omitempty"`
	Appends   []TextAppend `msgpack:"appends,omitempty" json:"appends,omitempty"`
}

// PartChange is a part the host must take whole, at Index of the message's
// parts. With KeptText (ABI v4) the part replaced one the host holds whose
// text Part.Text continues: Part.Text is sent without the held part's text,
// which the host puts in front (a long answer's closing part frame then
// costs the host no second copy of its text).
type PartChange struct {
	Index    int  `msgpack:"index" json:"index"`
	Part     Part `msgpack:"part" json:"part"`
	KeptText bool `msgpack:"kept_text,omitempty" json:"kept_text,omitempty"`
}

// TextAppend is text appended to the text of the held part at Index.
type TextAppend struct {
	Index int    `msgpack:"index" json:"index"`
	Text  string `msgpack:"text" json:"text"`
}

// markDirty records that e changed since the host's last take.
func (c *Client) markDirty(e *entry) {
	if !e.dirty {
		e.dirty = true
		c.dirty = append(c.dirty, e)
	}
}

// TakeChanges returns what changed since the previous call (the first call
// is a Reset with every message) and records that the host now holds it.
func (c *Client) TakeChanges() Changes {
	c.compactTo = nil
	ch := c.changesHead()
	list := c.changedEntries()
	ch.Messages = make([]MessageChange, 0, len(list))
	for _, e := range list {
		mc := MessageChange{MessageID: e.meta.MessageID}
		if c.changesReset || e.hostFull {
			m := e.message()
			if !c.changesReset {
				mc.KeptTexts = e.withoutKept(&m)
			}
			mc.Message = &m
		} else {
			for i := range e.parts {
				switch kind, head, tail := e.partChange(i); kind {
				case partWhole:
					mc.Parts = append(mc.Parts, e.wholePart(i))
				case partGrew:
					mc.Appends = append(mc.Appends, TextAppend{Index: i, Text: head + string(tail)})
				}
			}
		}
		ch.Messages = append(ch.Messages, mc)
	}
	c.clearChanges(list)
	return ch
}

// appendChangesBytes is TakeChanges encoded (as encodeChanges would) and
// appended to dst, without building the appended text as a string: a
// delta's take costs the delta's bytes, whatever the part's length. It
// allocates nothing but dst's growth: allocation is dear in WebAssembly.
func (c *Client) appendChangesBytes(dst []byte) []byte {
	c.compactTo = nil
	list := c.changedEntries()
	dst = c.appendChangesMap(dst, list)
	c.clearChanges(list)
	return dst
}

// appendChangesMap encodes the Changes of list (changedEntries) as a map.
func (c *Client) appendChangesMap(dst []byte, list []*entry) []byte {
	ch := c.changesHead()
	optional := 0
	if ch.NextBeforeSequence != 0 {
		optional++
	}
	if ch.Reset {
		optional++
	}
	dst = appendChangesHead(dst, &ch, optional)
	dst = msgp.AppendString(dst, "messages")
	dst = msgp.AppendArrayHeader(dst, len(list))
	for _, e := range list {
		if c.changesReset || e.hostFull {
			m := e.message()
			var kept []string
			if !c.changesReset {
				kept = e.withoutKept(&m)
			}
			dst = msgp.AppendMapHeader(dst, 2+btoi(len(kept) > 0))
			dst = msgp.AppendString(dst, "message_id")
			dst = msgp.AppendString(dst, m.MessageID)
			dst = msgp.AppendString(dst, "message")
			dst = mustEncodeStrict(appendMessage(dst, &m))
			if len(kept) > 0 {
				dst = msgp.AppendString(dst, "kept_texts")
				dst = msgp.AppendArrayHeader(dst, len(kept))
				for _, id := range kept {
					dst = msgp.AppendString(dst, id)
				}
			}
			continue
		}
		whole, grew := 0, 0
		for i := range e.parts {
			switch kind, _, _ := e.partChange(i); kind {
			case partWhole:
				whole++
			case partGrew:
				grew++
			}
		}
		dst = msgp.AppendMapHeader(dst, 1+btoi(whole > 0)+btoi(grew > 0))
		dst = msgp.AppendString(dst, "message_id")
		dst = msgp.AppendString(dst, e.meta.MessageID)
		if whole > 0 {
			dst = msgp.AppendString(dst, "parts")
			dst = msgp.AppendArrayHeader(dst, whole)
			for i := range e.parts {
				if kind, _, _ := e.partChange(i); kind == partWhole {
					pc := e.wholePart(i)
					dst = msgp.AppendMapHeader(dst, 2+btoi(pc.KeptText))
					dst = msgp.AppendString(dst, "index")
					dst = msgp.AppendInt(dst, int64(i))
					dst = msgp.AppendString(dst, "part")
					dst = mustEncodeStrict(appendPart(dst, &pc.Part))
					if pc.KeptText {
						dst = msgp.AppendString(dst, "kept_text")
						dst = msgp.AppendBool(dst, true)
					}
				}
			}
		}
		if grew > 0 {
			dst = msgp.AppendString(dst, "appends")
			dst = msgp.AppendArrayHeader(dst, grew)
			for i := range e.parts {
				if kind, head, tail := e.partChange(i); kind == partGrew {
					dst = msgp.AppendMapHeader(dst, 2)
					dst = msgp.AppendString(dst, "index")
					dst = msgp.AppendInt(dst, int64(i))
					dst = msgp.AppendString(dst, "text")
					dst = appendTextBytes(dst, head, tail)
				}
			}
		}
	}
	return dst
}

// appendTextBytes appends head+tail as one msgpack string.
func appendTextBytes(dst []byte, head string, tail []byte) []byte {
	dst = msgp.AppendStrHeader(dst, len(head)+len(tail))
	return append(append(dst, head...), tail...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// changesHead is the scalar part of the next Changes.
func (c *Client) changesHead() Changes {
	return Changes{
		Status:             c.status,
		Total:              c.total,
		HasMoreOlder:       c.hasMoreOlder,
		NextBeforeSequence: c.nextBefore,
		LoadingOlder:       c.olderReq != 0 || c.olderTimer != 0,
		IncludeInternal:    c.includeInternal,
		Reset:              c.changesReset,
	}
}

func appendChangesHead(b []byte, ch *Changes, optional int) []byte {
	b = msgp.AppendMapHeader(b, 6+optional)
	b = msgp.AppendString(b, "status")
	b = msgp.AppendString(b, ch.Status)
	b = msgp.AppendString(b, "total")
	b = msgp.AppendInt(b, ch.Total)
	b = msgp.AppendString(b, "has_more_older")
	b = msgp.AppendBool(b, ch.HasMoreOlder)
	if ch.NextBeforeSequence != 0 {
		b = msgp.AppendString(b, "next_before_sequence")
		b = msgp.AppendInt(b, ch.NextBeforeSequence)
	}
	b = msgp.AppendString(b, "loading_older")
	b = msgp.AppendBool(b, ch.LoadingOlder)
	b = msgp.AppendString(b, "include_internal")
	b = msgp.AppendBool(b, ch.IncludeInternal)
	if ch.Reset {
		b = msgp.AppendString(b, "reset")
		b = msgp.AppendBool(b, true)
	}
	return b
}

// changedEntries lists the messages the host must hear of, oldest first:
// after a reset every message of the window (each taken whole), else the
// entries changed since the last take that are still in the window (only a
// reset removes one, and it reports the whole list). The result is scratch.
func (c *Client) changedEntries() []*entry {
	if c.changesReset {
		return c.win
	}
	if len(c.dirty) > 1 {
		sort.Sort(bySequence(c.dirty))
	}
	n := 0
	for _, e := range c.dirty {
		if c.byID[e.meta.MessageID] == e {
			c.dirty[n] = e
			n++
		} else {
			e.dirty = false
		}
	}
	return c.dirty[:n]
}

// clearChanges records that the host holds every entry of list as it is
// now, and starts the next set of changes empty.
func (c *Client) clearChanges(list []*entry) {
	for _, e := range list {
		e.synced()
	}
	for _, e := range c.dirty {
		e.dirty = false
	}
	clear(c.dirty)
	c.dirty = c.dirty[:0]
	c.changesReset = false
}

// What a host must do with part i of a message it holds.
const (
	partSame  = iota // nothing
	partWhole        // take it whole: new, or replaced by a part frame
	partGrew         // append head+tail to its text
)

// partChange says what changed in part i since the host's take; for text
// that only grew, the bytes appended, as a head from the built text and a
// tail from the delta buffer, so nothing is copied to report them.
func (e *entry) partChange(i int) (kind int, head string, tail []byte) {
	if i >= len(e.hostLen) || e.hostLen[i] < 0 {
		return partWhole, "", nil
	}
	have := e.hostLen[i]
	if e.textLen(i) == have {
		return partSame, "", nil
	}
	text := e.parts[i].Text
	if i < len(e.tails) {
		tail = e.tails[i]
	}
	if have < len(text) {
		return partGrew, text[have:], tail
	}
	return partGrew, "", tail[have-len(text):]
}

// wholePart is the PartChange of part i, taken whole: without the text the
// host holds when a part frame replaced it with text that continues it
// (entry.partKept).
func (e *entry) wholePart(i int) PartChange {
	pc := PartChange{Index: i, Part: e.parts[i]}
	pc.Part.Text = e.text(i)
	if held := e.partKeptAt(i); held > 0 {
		pc.Part.Text = pc.Part.Text[held:]
		pc.KeptText = true
	}
	return pc
}

// withoutKept cuts from the texts of m's parts that e.kept names (m is
// e.message(), its parts a copy) the beginning the host holds, and returns
// their ids, or nil.
func (e *entry) withoutKept(m *Message) []string {
	if len(e.kept) == 0 {
		return nil
	}
	ids := make([]string, 0, len(e.kept))
	for _, k := range e.kept {
		if i := m.findPart(k.partID); i >= 0 {
			m.Parts[i].Text = m.Parts[i].Text[k.held:]
			ids = append(ids, k.partID)
		}
	}
	return ids
}

// synced records that the host holds e as it is now.
func (e *entry) synced() {
	e.hostFull = false
	e.kept = e.kept[:0]
	e.partKept = e.partKept[:0]
	if cap(e.hostLen) < len(e.parts) {
		e.hostLen = make([]int, len(e.parts))
	}
	e.hostLen = e.hostLen[:len(e.parts)]
	for i := range e.parts {
		e.hostLen[i] = e.textLen(i)
	}
}
