package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// append.go exports the codec's append-style entry points for servers that
// encode on a hot path (a WebSocket writer, a page handler, a store writing
// part bodies): they write into the caller's buffer, so a reused buffer
// makes encoding allocation-free. Unlike the Encode* functions they write a
// nil slice as msgpack nil, exactly as msgpack.Marshal (compact ints,
// sorted map keys) writes the same value; see append_test.go.
//
// On failure (an `any` field holding a value msgpack cannot represent, such
// as a channel) they return dst unchanged and a CodeInternal error.

// appendFrameList appends one WebSocket message, a msgpack array of frames.
func appendFrameList(dst []byte, frames []Frame) ([]byte, error) {
	b := msgp.AppendArrayHeader(dst, len(frames))
	var err error
	for i := range frames {
		if b, err = appendFrame(b, &frames[i]); err != nil {
			return dst, errf(err, "frame %d (%s)", frames[i].Seq, frames[i].Kind)
		}
	}
	return b, nil
}

// appendPageChecked appends a messages() page.
func appendPageChecked(dst []byte, p *MessagePage) ([]byte, error) {
	b, err := appendMessagePage(dst, p)
	if err != nil {
		return dst, asError(err)
	}
	return b, nil
}

// appendMessageChecked appends one message.
func appendMessageChecked(dst []byte, m *Message) ([]byte, error) {
	b, err := appendMessage(dst, m)
	if err != nil {
		return dst, asError(err)
	}
	return b, nil
}

// appendPartChecked appends one part: the body format of a stored part.
func appendPartChecked(dst []byte, p *Part) ([]byte, error) {
	b, err := appendPart(dst, p)
	if err != nil {
		return dst, asError(err)
	}
	return b, nil
}

// decodePartBytes decodes one part, as appendPartChecked writes it (or msgpack/v5 with
// any key order, unknown keys skipped). It checks the shape only (see
// validatePartValue). Every string is copied, so b may be memory the caller
// reuses, such as a blob owned by SQLite.
func decodePartBytes(b []byte) (Part, error) {
	var p Part
	if len(b) == 0 {
		return p, Errorf(CodeMalformed, "part: empty input")
	}
	d := newDecoder(b)
	d.decodePart(&p)
	if err := d.finish("part"); err != nil {
		return Part{}, err
	}
	return p, nil
}

// appendFramesEventHeader appends what encodeEvent writes for
// Event{Type: EvFrames, Data: data} before data's bytes, for len(data) = n:
// a host can write a WebSocket message's bytes after it, straight into the
// core's memory, without encoding the event around a copy.
func appendFramesEventHeader(dst []byte, n int) []byte {
	if n == 0 { // Data is omitempty: a map of the type alone
		return msgp.AppendKeyStr(append(dst, 0x81), keyEventType, EvFrames)
	}
	dst = msgp.AppendKeyStr(append(dst, 0x82), keyEventType, EvFrames)
	return msgp.AppendBinHeader(append(dst, keyEventData...), n)
}
