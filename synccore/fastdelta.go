package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// fastdelta.go is the shortcut of the commonest event of all: one delta in
// one WebSocket message, in the exact bytes the Go and JavaScript hosts and
// the server write, arriving in order for the message the previous delta
// went to. It reads the event in one pass over fixed byte patterns, with a
// handful of calls, because in WebAssembly every call and every generic
// step costs many times its native price. Anything else — another shape or
// key order, a gap, a stale or duplicate delta, an unknown part — returns
// false before changing anything, and the ordinary path handles the event;
// fastdelta_test.go checks both paths leave the same state and output.

// The canonical prefixes: Event{Type: "frames", Data: ...} as msgpack/v5
// and @msgpack/msgpack write it (a map of 2), and a delta Frame's keys in
// declared order (an array of one map of 7).
const (
	framesEventPrefix = "\x82" + keyEventType + "\xa6" + EvFrames + keyEventData
	deltaFramePrefix  = "\x91\x87" + keyFrameSeq
	deltaKind         = keyFrameKind + "\xa5" + FrameDelta + keyFrameMessageID
)

// fastDelta handles event if it is a live, in-order delta to the hot
// message; it returns the Output appended to dst and true, or false with
// nothing changed.
func (c *Client) fastDelta(dst, event []byte) ([]byte, bool) {
	if _, _, ok := c.fastAppend(event); !ok {
		return nil, false
	}
	return append(dst, c.renderOne...), true
}

// fastAppend is fastDelta without the Output: it applies event if it is a
// live, in-order delta to the hot message (c.hot) and returns the index of
// the part it appended to and where the text's bytes start in event (they
// run to its end), or false with nothing changed.
func (c *Client) fastAppend(event []byte) (part, textAt int, ok bool) {
	if noFastDelta || c.status != StatusLive || c.hot == nil || c.hotGen != c.winGen || len(c.renderOne) == 0 ||
		c.renderOneID != c.hot.meta.MessageID {
		return 0, 0, false
	}
	p := len(framesEventPrefix)
	if len(event) < p+2 || string(event[:p]) != framesEventPrefix {
		return 0, 0, false
	}
	// The data's bin header; the data must run exactly to the end.
	var n int
	switch event[p] {
	case 0xc4:
		n, p = int(event[p+1]), p+2
	case 0xc5:
		if len(event) < p+3 {
			return 0, 0, false
		}
		n, p = int(event[p+1])<<8|int(event[p+2]), p+3
	default:
		return 0, 0, false
	}
	b := event[p:]
	if len(b) != n || len(b) < len(deltaFramePrefix) || string(b[:len(deltaFramePrefix)]) != deltaFramePrefix {
		return 0, 0, false
	}
	r := msgp.Reader{Buf: b, Pos: len(deltaFramePrefix)}
	seq, ok := r.Int()
	if !ok || seq != int64(c.lastSeq)+1 || !r.Key(deltaKind) {
		return 0, 0, false
	}
	msgID, ok := r.Str()
	e := c.hot
	if !ok || string(msgID) != e.meta.MessageID || !r.Key(keyFrameRevision) {
		return 0, 0, false
	}
	rev, ok := r.Int()
	if !ok || rev != e.meta.Revision || e.done() || !r.Key(keyFramePartID) {
		return 0, 0, false
	}
	partID, ok := r.Str()
	if !ok || len(partID) == 0 || !r.Key(keyFrameOffset) {
		return 0, 0, false
	}
	offset, ok := r.Int()
	if !ok || !r.Key(keyFrameText) {
		return 0, 0, false
	}
	text, ok := r.Str()
	if !ok || len(text) == 0 || !r.Done() {
		return 0, 0, false
	}
	i := e.findPartBytes(partID)
	if i < 0 || (e.parts[i].Type != PartText && e.parts[i].Type != PartReasoning) || offset != int64(e.textLen(i)) {
		return 0, 0, false
	}
	// What the ordinary path does for this event: take the frame, append
	// the text, reset the backoff, answer "render this message".
	c.lastSeq = uint64(seq)
	e.appendText(i, text)
	c.markDirty(e)
	c.attempt = 0
	return i, p + r.Pos - len(text), true
}

// noFastDelta turns the shortcut off, for the tests that compare it with
// the ordinary path.
var noFastDelta bool
