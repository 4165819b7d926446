package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// changes_handle.go is the one-call path of ABI v3 (docs/protocol.md
// §7.4, agentsync_handle_changes): handle an event and take the changes in
// the same call, so a delta costs one crossing of the host boundary, and
// answer the commonest take — text appended to parts the host holds — in a
// flat array a host reads without a generic decoder.

// Flags of the appends form's head (the view's booleans, one bit each).
const (
	appendsHasMoreOlder    = 1 << iota // View.HasMoreOlder
	appendsLoadingOlder                // View.LoadingOlder
	appendsIncludeInternal             // View.IncludeInternal
)

// appendHandleChanges handles event as appendHandleBytes does and appends
// two msgpack values to dst: the Output, or nil when its only command is the
// render of one message (what the changes that follow already say), then
// what changed since the previous take: the appends form when it holds only
// text appended to parts the host holds (see appendAppends), else the
// Changes map of appendChangesBytes. A client that panicked answers its
// core_broken Output followed by nil. outLen is the Output value's length.
func (c *Client) appendHandleChanges(dst, event []byte) (res []byte, outLen int) {
	start := len(dst)
	defer func() {
		if p := recover(); p != nil {
			res = appendOutputOf(dst[:start], nil, Errorf(CodeCoreBroken, "client panic: %v", p))
			outLen = len(res) - start
			res = msgp.AppendNil(res)
		}
	}()
	res = c.appendHandleBytes(dst, event)
	if len(c.renderOne) > 0 && string(res[start:]) == string(c.renderOne) {
		res = msgp.AppendNil(res[:start])
	}
	outLen = len(res) - start
	if res[start] != 0xc0 && isBrokenOutput(res[start:]) {
		return msgp.AppendNil(res), outLen
	}
	list := c.changedEntries()
	c.compactTo = nil
	if c.onlyAppends(list) {
		res = c.appendAppends(res, list)
		if res[start] == 0xc0 {
			c.noteCompactTarget(list)
		}
	} else {
		res = c.appendChangesMap(res, list)
	}
	c.clearChanges(list)
	return res, outLen
}

// isBrokenOutput reports whether an encoded Output carries core_broken.
func isBrokenOutput(out []byte) bool {
	if out[0] != 0x82 { // an Output with an error is a map of two keys
		return false
	}
	o, err := decodeOutput(out)
	return err == nil && o.Error != nil && o.Error.Code == CodeCoreBroken
}

// onlyAppends reports whether every change in list is text appended to a
// part the host holds (no reset, no whole message, no whole part).
func (c *Client) onlyAppends(list []*entry) bool {
	if c.changesReset {
		return false
	}
	for _, e := range list {
		if e.hostFull {
			return false
		}
		for i := range e.parts {
			if kind, _, _ := e.partChange(i); kind == partWhole {
				return false
			}
		}
	}
	return true
}

// appendAppends encodes the take of list, text appends only, as one flat
// array: the view's scalars (status, total, flags, next_before_sequence or
// 0), then per appended part its message_id, its index and the text:
//
//	[status, total, flags, next_before, id₁, index₁, text₁, id₂, ...]
//
// A delta's take is then a dozen bytes of header and its own text.
func (c *Client) appendAppends(dst []byte, list []*entry) []byte {
	n := 0
	for _, e := range list {
		for i := range e.parts {
			if kind, _, _ := e.partChange(i); kind == partGrew {
				n++
			}
		}
	}
	ch := c.changesHead()
	flags := 0
	if ch.HasMoreOlder {
		flags |= appendsHasMoreOlder
	}
	if ch.LoadingOlder {
		flags |= appendsLoadingOlder
	}
	if ch.IncludeInternal {
		flags |= appendsIncludeInternal
	}
	dst = msgp.AppendArrayHeader(dst, 4+3*n)
	dst = msgp.AppendString(dst, ch.Status)
	dst = msgp.AppendInt(dst, ch.Total)
	dst = msgp.AppendInt(dst, int64(flags))
	dst = msgp.AppendInt(dst, ch.NextBeforeSequence)
	for _, e := range list {
		for i := range e.parts {
			if kind, head, tail := e.partChange(i); kind == partGrew {
				dst = msgp.AppendString(dst, e.meta.MessageID)
				dst = msgp.AppendInt(dst, int64(i))
				dst = appendTextBytes(dst, head, tail)
			}
		}
	}
	return dst
}
