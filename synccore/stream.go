package synccore

import (
	"slices"
	"strconv"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
)

// stream.go takes the frames of one WebSocket message: it proves their
// numbering continuous, starts the snapshot read on the hello, buffers while
// syncing and applies while live. Frames before a failure are kept; the
// failure (gap, malformed frame) resynchronises and ends the message.

// onFrames handles the bytes of one WebSocket message.
func (c *Client) onFrames(data []byte) {
	r := msgp.Reader{Buf: data}
	n, ok := r.ArrayHeader()
	if !ok || n == 0 {
		c.fail(Errorf(CodeMalformed, "frames: not a non-empty msgpack array"))
		return
	}
	var rf rawFrame
	for i := 0; i < n; i++ {
		if err := nextFrame(&r, &rf); err != nil {
			c.fail(err)
			return
		}
		if rf.seq != c.lastSeq+1 {
			c.resync("frame gap: seq "+strconv.FormatUint(rf.seq, 10)+" after "+strconv.FormatUint(c.lastSeq, 10), false, true)
			return
		}
		c.lastSeq = rf.seq
		c.takeFrame(&rf)
		if c.status == StatusBackoff {
			return // the frame broke the stream; the rest of the message is moot
		}
	}
	if !r.Done() {
		c.fail(Errorf(CodeMalformed, "frames: %d trailing bytes", len(data)-r.Pos))
	}
}

// takeFrame routes one frame whose seq was just accepted.
func (c *Client) takeFrame(rf *rawFrame) {
	switch c.status {
	case StatusConnecting:
		if rf.full == nil || rf.full.Kind != FrameHello || rf.seq != 1 {
			c.fail(Errorf(CodeMalformed, "frame %d: the first frame of a subscription must be hello", rf.seq))
			return
		}
		c.onHello(rf.full)
	case StatusSyncing:
		if rf.full != nil && (rf.full.Kind == FrameResync || rf.full.Kind == FrameError || rf.full.Kind == FrameHello) {
			c.applyFrame(rf.full) // control frames act at once, never after the snapshot
			return
		}
		if len(c.buffered) >= maxBuffered {
			c.fail(Errorf(CodeTooLarge, "more than %d frames arrived during the snapshot read", maxBuffered))
			return
		}
		c.buffered = append(c.buffered, rf.frame())
	case StatusLive:
		if c.applyRaw(rf) {
			c.attempt = 0 // live and a frame applied after the snapshot: backoff resets
		}
	}
}

func (c *Client) onHello(f *Frame) {
	if f.SessionID != "" && f.SessionID != c.sessionID {
		c.fail(Errorf(CodeMalformed, "hello for session %q, this client syncs %q", f.SessionID, c.sessionID))
		return
	}
	c.setStatus(StatusSyncing, "")
	c.fetchHead()
}

// applyRaw applies a frame in live status; it reports false when the frame
// broke the stream (the client is then in backoff).
func (c *Client) applyRaw(rf *rawFrame) bool {
	if rf.full == nil {
		c.applyDelta(rf.msgID, rf.rev, rf.partID, rf.offset, rf.text)
	} else {
		c.applyFrame(rf.full)
	}
	return c.status != StatusBackoff
}

// applyFrame applies one decoded, validated frame under §4.2.
func (c *Client) applyFrame(f *Frame) {
	if len(f.Kept) > 0 && !c.expandKept(f) {
		return
	}
	switch f.Kind {
	case FrameMessage:
		c.applyMessage(f.Message)
	case FramePart:
		c.applyPart(f)
	case FrameDelta:
		c.applyDelta([]byte(f.MessageID), f.Revision, []byte(f.PartID), f.Offset, []byte(f.Text))
	case FrameResync:
		c.resync("server asked to resync: "+f.Code+" "+f.Reason, true, true)
	case FrameError:
		c.fail(&Error{Code: serverErrorCode(f.Code), Message: "server error frame: " + f.Reason})
	case FrameHello:
		c.fail(Errorf(CodeMalformed, "frame %d: hello in the middle of a subscription", f.Seq))
	}
}

// serverErrorCode is the code an error frame surfaces with. core_broken
// means "this client's core panicked, rebuild it" and only a core may say
// so: a server that sends it (buggy or hostile) must not make every client
// rebuild, so it reads as internal, like an error frame without a code.
func serverErrorCode(code string) string {
	if code == "" || code == CodeCoreBroken {
		return CodeInternal
	}
	return code
}

// expandKept puts in front of each text that f.Kept names the first Len
// bytes of the text this client holds of that part, which must be exactly
// Len bytes long: the server sent it this text and elided it (protocol
// §4.5). A client that holds something else lost track of the stream, so it
// resyncs (a new subscription starts with nothing elided). Reports whether
// f may be applied.
func (c *Client) expandKept(f *Frame) bool {
	msgID, rev := f.MessageID, f.Revision
	if f.Kind == FrameMessage {
		msgID, rev = f.Message.MessageID, f.Message.Revision
	}
	e := c.byID[msgID]
	// A frame this client ignores needs no text: one for a message it does
	// not show (an internal one, one older than its window) or that no
	// longer changes (done, or a revision it holds newer), as applyMessage
	// and applyPart ignore it.
	switch {
	case f.Kind == FrameMessage && f.Message.Visibility == VisibilityInternal && !c.includeInternal,
		f.Kind == FrameMessage && e == nil && len(c.win) > 0 && f.Message.Sequence < c.win[0].meta.Sequence,
		e != nil && (e.done() || rev < e.meta.Revision || f.Kind == FrameMessage && rev == e.meta.Revision),
		f.Kind == FramePart && e == nil:
		f.Kept = nil
		return true
	}
	if f.Kind == FrameMessage {
		m := *f.Message // the frame's own copy: its parts get the whole texts
		m.Parts = slices.Clone(m.Parts)
		f.Message = &m
	} else {
		p := *f.Part
		f.Part = &p
	}
	for _, k := range f.Kept {
		i := -1
		if e != nil {
			i = e.findPart(k.PartID)
		}
		if i < 0 || int64(e.textLen(i)) != k.Len {
			c.resync("kept text of part "+k.PartID+" of message "+msgID+" that this client does not hold as sent", false, true)
			return false
		}
		held := e.text(i)
		if f.Kind == FrameMessage {
			p := &f.Message.Parts[f.Message.findPart(k.PartID)]
			p.Text = held + p.Text
		} else {
			f.Part.Text = held + f.Part.Text
		}
	}
	f.Kept = nil
	return true
}
