package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// changes_compact.go is the compact append of ABI v4 (docs/protocol.md
// §7.4.2, agentsync_handle_compact): the answer to the steady state of a
// stream — one delta per WebSocket message, each to the part the previous
// one went to — without a byte of output. The appends form of such a delta
// repeats what the host knows already (the view's scalars, the message id)
// and copies the text the host has just written in; the compact answer
// names only the part's index and where the text starts in the input.
//
// It is given only when the take it stands for is exactly "this text
// appended to part i of the message the host's previous take appended to,
// alone": nothing else pending, the scalars as that take gave them, and the
// event's Output nothing but the render of that message.

// maxCompactIndex and maxCompactTextAt bound what the packed answer holds
// (packCompact): a part index below 2^15, a text offset below 2^16.
const (
	maxCompactIndex  = 1<<15 - 1
	maxCompactTextAt = 1<<16 - 1
)

// packCompact packs a compact answer in 32 bits: the part's index in the
// high 16 (bit 31 clear) and the offset of the text's first byte in the
// event in the low 16. It is never 0 (the text follows the event's header).
func packCompact(part, textAt int) uint32 { return uint32(part)<<16 | uint32(textAt) }

// splitCompact is packCompact's inverse.
func splitCompact(v uint32) (part, textAt int) { return int(v >> 16), int(v & 0xffff) }

// appendHandleCompact is appendHandleChanges that answers the compact
// append when it can: then it returns dst unchanged and compact != 0, and
// the host appends event[textAt:] (UTF-8) to part `part` of the message its
// previous take appended to (splitCompact(compact)). Otherwise
// compact is 0 and the result is appendHandleChanges'.
func (c *Client) appendHandleCompact(dst, event []byte) (res []byte, outLen int, compact uint32) {
	defer func() {
		if p := recover(); p != nil {
			// As appendHandleChanges answers a panic: core_broken, then nil.
			res = appendOutputOf(dst, nil, Errorf(CodeCoreBroken, "client panic: %v", p))
			outLen, compact = len(res)-len(dst), 0
			res = msgp.AppendNil(res)
		}
	}()
	if e := c.compactTo; e != nil && e == c.hot && len(c.dirty) == 0 && !c.changesReset && c.scalars() == c.compactHead {
		if v, ok := c.compactAppend(e, event); ok {
			return dst, 0, v
		}
	}
	res, outLen = c.appendHandleChanges(dst, event)
	return res, outLen, 0
}

// compactAppend applies event on the fast path and records that the host
// holds the appended text, or changes nothing and returns false.
func (c *Client) compactAppend(e *entry, event []byte) (uint32, bool) {
	// The packed answer's bounds hold when the event is short enough and
	// the message has few enough parts.
	if len(event) > maxCompactTextAt || len(e.parts) > maxCompactIndex {
		return 0, false
	}
	i, textAt, ok := c.fastAppend(event)
	if !ok {
		return 0, false
	}
	// fastAppend marked e dirty, the only dirty entry: the host takes it
	// now, so it is clean again with the host holding its text.
	e.dirty = false
	c.dirty = c.dirty[:0]
	e.hostLen[i] = e.textLen(i)
	return packCompact(i, textAt), true
}

// viewScalars are the view's fields besides its messages, as a take gives
// them (Changes without Messages), comparable.
type viewScalars struct {
	status                    string
	total, nextBefore         int64
	hasMoreOlder, loading     bool
	includeInternal, resetAll bool
}

func (c *Client) scalars() viewScalars {
	h := c.changesHead()
	return viewScalars{h.Status, h.Total, h.NextBeforeSequence, h.HasMoreOlder, h.LoadingOlder, h.IncludeInternal, h.Reset}
}

// noteCompactTarget records the take of list (the appends form, its Output
// nil) as the base of compact answers when it appended to one part of one
// message.
func (c *Client) noteCompactTarget(list []*entry) {
	if len(list) != 1 {
		return
	}
	e, grew := list[0], 0
	for i := range e.parts {
		if kind, _, _ := e.partChange(i); kind == partGrew {
			grew++
		}
	}
	if grew == 1 {
		c.compactTo, c.compactHead = e, c.scalars()
	}
}
