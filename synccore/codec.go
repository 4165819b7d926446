package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// codec.go is the msgpack codec of every shape of the protocol. The
// per-type code is generated from the types' msgpack tags (codec_gen.go,
// by tools/gencodec) on the primitives of internal/msgp; nothing uses
// reflection on the hot paths, and the package links no msgpack library.
// Encoders write compact ints and sorted map keys, so the same value always
// gives the same bytes on every host; the bytes equal msgpack/v5's with
// UseCompactInts(true) and SetSortMapKeys(true) (codec_test.go checks it on
// random values). Decoders turn any failure into a typed CodeMalformed
// error.
//
// The generated code lives here, not in internal/msgp, because it names
// this package's types and the state machine decodes frames with it: msgp
// imports nothing of synccore, and synccore imports msgp.

//go:generate go run ../tools/gencodec -dir . -o codec_gen.go -types Event,Frame,MessagePage,Output,View,Changes -canon Message

// mustEncode is for the view of this package, whose encoding can only
// fail on a value the host put in an `any` field that msgpack cannot
// represent (a channel, say): such a value is reported as an Output that
// carries the error, never a panic.
func mustEncode(b []byte, err error) []byte {
	if err != nil {
		return appendOutputOf(nil, nil, &Error{Code: CodeInternal, Message: "encode *synccore.View: " + asError(err).Message})
	}
	return b
}

// mustEncodeStrict encodes protocol shapes; an unencodable `any` inside is
// a programming error of the caller and is reported as an empty result.
func mustEncodeStrict(b []byte, err error) []byte {
	if err != nil {
		return nil
	}
	return b
}

// asError converts any error into the kit's typed error.
func asError(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// encodeFrames encodes one WebSocket message: a msgpack array of frames.
func encodeFrames(frames []Frame) []byte {
	b := msgp.AppendArrayHeader(nil, len(frames))
	var err error
	for i := range frames {
		if b, err = appendFrame(b, &frames[i]); err != nil {
			return nil
		}
	}
	return b
}

// decodeFrames decodes one WebSocket message into its frames. It checks the
// shape only (a non-empty array of maps); the meaning of each frame (its
// kind, its part) is checked by validateFrame.
func decodeFrames(b []byte) ([]Frame, error) {
	r := msgp.Reader{Buf: b}
	n, ok := r.ArrayHeader()
	if !ok {
		return nil, Errorf(CodeMalformed, "frames: not a msgpack array")
	}
	if n == 0 {
		return nil, Errorf(CodeMalformed, "frames: empty array")
	}
	frames := make([]Frame, 0, min(n, 1024))
	for range n {
		start := r.Pos
		if !r.Skip() {
			return nil, Errorf(CodeMalformed, "frames: truncated frame %d", len(frames)+1)
		}
		f, err := decodeFrame(b[start:r.Pos])
		if err != nil {
			return nil, err
		}
		frames = append(frames, f)
	}
	if !r.Done() {
		return nil, Errorf(CodeMalformed, "frames: %d trailing bytes", len(b)-r.Pos)
	}
	return frames, nil
}

// decodeFrame decodes the bytes of one frame map.
func decodeFrame(b []byte) (Frame, error) {
	var f Frame
	if len(b) == 0 || !(b[0]&0xf0 == 0x80 || b[0] == 0xde || b[0] == 0xdf) {
		return f, Errorf(CodeMalformed, "frame: not a msgpack map")
	}
	if err := decodeWith(b, "frame", func(d *decoder) { d.decodeFrame(&f) }); err != nil {
		return Frame{}, err
	}
	return f, nil
}

// encodePage encodes a messages() page.
func encodePage(p MessagePage) []byte {
	if p.Items == nil {
		p.Items = []Message{}
	}
	return mustEncodeStrict(appendMessagePage(make([]byte, 0, messagesSize(p.Items)), &p))
}

// decodePage decodes a messages() page and validates every message in it.
func decodePage(b []byte) (MessagePage, error) {
	var p MessagePage
	err := decodeWith(b, "page", func(d *decoder) {
		d.R.Shared = make(map[string]string, 16)
		d.decodeMessagePage(&p)
	})
	if err != nil {
		return MessagePage{}, err
	}
	if err := validatePage(p); err != nil {
		return MessagePage{}, err
	}
	return p, nil
}

// encodeEvent encodes an event for handleBytes.
func encodeEvent(ev Event) []byte { return mustEncodeStrict(appendEvent(nil, &ev)) }

// decodeEventInPlace is decodeEvent with ev.Data aliasing b.
func decodeEventInPlace(b []byte, ev *Event) error {
	if len(b) == 0 {
		return Errorf(CodeMalformed, "event: empty input")
	}
	d := newDecoder(b)
	d.Alias = true
	d.decodeEvent(ev)
	if err := d.finish("event"); err != nil {
		*ev = Event{}
		return err
	}
	return nil
}

// decodeEvent decodes the bytes given to handleBytes.
func decodeEvent(b []byte) (Event, error) {
	var ev Event
	if err := decodeWith(b, "event", func(d *decoder) { d.decodeEvent(&ev) }); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// encodeOutput encodes the answer of handleBytes, byte-identical to the
// output handleBytes builds (see output.go).
func encodeOutput(o Output) []byte {
	return appendOutputOf(nil, o.Commands, o.Error)
}

// decodeOutput decodes the answer of handleBytes.
func decodeOutput(b []byte) (Output, error) {
	var o Output
	if err := decodeWith(b, "output", func(d *decoder) { d.decodeOutput(&o) }); err != nil {
		return Output{}, err
	}
	return o, nil
}

// encodeView encodes a view.
func encodeView(v View) []byte {
	if v.Messages == nil {
		v.Messages = []Message{}
	}
	return mustEncode(appendView(make([]byte, 0, messagesSize(v.Messages)), &v))
}

// decodeView decodes a view.
func decodeView(b []byte) (View, error) {
	var v View
	err := decodeWith(b, "view", func(d *decoder) {
		d.R.Shared = make(map[string]string, 16)
		d.decodeView(&v)
	})
	if err != nil {
		return View{}, err
	}
	return v, nil
}

// encodeMessage encodes one message.
func encodeMessage(m Message) []byte {
	if m.Parts == nil {
		m.Parts = []Part{}
	}
	return mustEncodeStrict(appendMessage(make([]byte, 0, messageSize(&m)), &m))
}

// decodeMessage decodes one message (shape only; see validateMessage).
func decodeMessage(b []byte) (Message, error) {
	var m Message
	if err := decodeWith(b, "message", func(d *decoder) { d.decodeMessage(&m) }); err != nil {
		return Message{}, err
	}
	return m, nil
}

// errf wraps a lower error with context, keeping its code.
func errf(err error, format string, args ...any) *Error {
	e := asError(err)
	return &Error{Code: e.Code, Message: Errorf(e.Code, format, args...).Message + ": " + e.Message}
}
