package synccore

import "sort"

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
	Status             string          `msgpack:"status" json:"status"`
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
	MessageID string       `msgpack:"message_id" json:"message_id"`
	Message   *Message     `msgpack:"message,omitempty" json:"message,omitempty"`
	Parts     []PartChange `msgpack:"parts,omitempty" json:"parts,omitempty"`
	Appends   []TextAppend `msgpack:"appends,omitempty" json:"appends,omitempty"`
}

// PartChange is a part the host must take whole, at Index of the message's parts.
type PartChange struct {
	Index int  `msgpack:"index" json:"index"`
	Part  Part `msgpack:"part" json:"part"`
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
	ch := c.changesHead()
	c.eachChange(func(e *entry, whole bool) {
		mc := MessageChange{MessageID: e.meta.MessageID}
		if whole {
			m := e.message()
			mc.Message = &m
		} else {
			e.eachPartChange(func(i int) {
				e.text(i)
				mc.Parts = append(mc.Parts, PartChange{Index: i, Part: e.parts[i]})
			}, func(i int, head string, tail []byte) {
				mc.Appends = append(mc.Appends, TextAppend{Index: i, Text: head + string(tail)})
			})
		}
		ch.Messages = append(ch.Messages, mc)
	})
	if ch.Messages == nil {
		ch.Messages = []MessageChange{}
	}
	return ch
}

// AppendChangesBytes is TakeChanges encoded (as EncodeChanges would) and
// appended to dst, without building the appended text as a string: a
// delta's take costs the delta's bytes, whatever the part's length.
func (c *Client) AppendChangesBytes(dst []byte) []byte {
	ch := c.changesHead()
	n := 0
	if ch.NextBeforeSequence != 0 {
		n++
	}
	if ch.Reset {
		n++
	}
	dst = appendChangesHead(dst, &ch, n)
	msgs := c.chgMsgs[:0] // the messages, counted as they are written
	count := 0
	c.eachChange(func(e *entry, whole bool) {
		count++
		if whole {
			m := e.message()
			msgs = appendMapHeader(msgs, 2)
			msgs = appendString(msgs, "message_id")
			msgs = appendString(msgs, m.MessageID)
			msgs = appendString(msgs, "message")
			msgs = mustEncodeStrict(appendMessage(msgs, &m))
			return
		}
		parts, appends := c.chgParts[:0], c.chgAppends[:0]
		np, na := 0, 0
		e.eachPartChange(func(i int) {
			e.text(i)
			np++
			parts = appendMapHeader(parts, 2)
			parts = appendString(parts, "index")
			parts = appendInt(parts, int64(i))
			parts = appendString(parts, "part")
			parts = mustEncodeStrict(appendPart(parts, &e.parts[i]))
		}, func(i int, head string, tail []byte) {
			na++
			appends = appendMapHeader(appends, 2)
			appends = appendString(appends, "index")
			appends = appendInt(appends, int64(i))
			appends = appendString(appends, "text")
			appends = appendStrHeader(appends, len(head)+len(tail))
			appends = append(append(appends, head...), tail...)
		})
		fields := 1
		if np > 0 {
			fields++
		}
		if na > 0 {
			fields++
		}
		msgs = appendMapHeader(msgs, fields)
		msgs = appendString(msgs, "message_id")
		msgs = appendString(msgs, e.meta.MessageID)
		if np > 0 {
			msgs = appendString(msgs, "parts")
			msgs = append(appendArrayHeader(msgs, np), parts...)
		}
		if na > 0 {
			msgs = appendString(msgs, "appends")
			msgs = append(appendArrayHeader(msgs, na), appends...)
		}
		c.chgParts, c.chgAppends = parts, appends
	})
	c.chgMsgs = msgs
	dst = appendString(dst, "messages")
	dst = appendArrayHeader(dst, count)
	dst = append(dst, msgs...)
	c.trimScratch()
	return dst
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
	b = appendMapHeader(b, 6+optional)
	b = appendString(b, "status")
	b = appendString(b, ch.Status)
	b = appendString(b, "total")
	b = appendInt(b, ch.Total)
	b = appendString(b, "has_more_older")
	b = appendBool(b, ch.HasMoreOlder)
	if ch.NextBeforeSequence != 0 {
		b = appendString(b, "next_before_sequence")
		b = appendInt(b, ch.NextBeforeSequence)
	}
	b = appendString(b, "loading_older")
	b = appendBool(b, ch.LoadingOlder)
	b = appendString(b, "include_internal")
	b = appendBool(b, ch.IncludeInternal)
	if ch.Reset {
		b = appendString(b, "reset")
		b = appendBool(b, true)
	}
	return b
}

// eachChange calls fn for every message the host must hear of, oldest
// first (whole: it takes the message whole), records that the host holds
// them, and clears the pending changes. After a reset that is every
// message of the window, whole.
func (c *Client) eachChange(fn func(e *entry, whole bool)) {
	if c.changesReset {
		for _, e := range c.win {
			fn(e, true)
			e.synced()
		}
	} else {
		if len(c.dirty) > 1 {
			sort.Sort(bySequence(c.dirty))
		}
		for _, e := range c.dirty {
			if c.byID[e.meta.MessageID] != e {
				continue // left the window: only a reset does that, and it reports the whole list
			}
			fn(e, e.hostFull)
			e.synced()
		}
	}
	for _, e := range c.dirty {
		e.dirty = false
	}
	clear(c.dirty)
	c.dirty = c.dirty[:0]
	c.changesReset = false
}

// eachPartChange reports, for a message the host holds, each part it must
// take whole (new or replaced) and each text that only grew, as the bytes
// appended since the host's take: a head from the built text and a tail
// from the delta buffer, so nothing is copied to report them.
func (e *entry) eachPartChange(whole func(i int), grew func(i int, head string, tail []byte)) {
	for i := range e.parts {
		if i >= len(e.hostLen) || e.hostLen[i] < 0 {
			whole(i)
			continue
		}
		have := e.hostLen[i]
		if e.textLen(i) == have {
			continue
		}
		text := e.parts[i].Text
		var tail []byte
		if i < len(e.tails) {
			tail = e.tails[i]
		}
		head := ""
		if have < len(text) {
			head = text[have:]
		} else {
			tail = tail[have-len(text):]
		}
		grew(i, head, tail)
	}
}

// synced records that the host holds e as it is now.
func (e *entry) synced() {
	e.hostFull = false
	if cap(e.hostLen) < len(e.parts) {
		e.hostLen = make([]int, len(e.parts))
	}
	e.hostLen = e.hostLen[:len(e.parts)]
	for i := range e.parts {
		e.hostLen[i] = e.textLen(i)
	}
}

// trimScratch lets go of scratch buffers a long text made large: a take
// holding a whole 10 MB message must not pin 10 MB for every later delta.
func (c *Client) trimScratch() {
	const keep = 64 << 10
	for _, b := range []*[]byte{&c.chgMsgs, &c.chgParts, &c.chgAppends} {
		if cap(*b) > keep {
			*b = nil
		}
	}
}
