package synccore

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// codec.go is the generic (reflection-based) msgpack codec of every shape of
// the protocol. Encoders write compact ints and sorted map keys, so the same
// value always gives the same bytes on every host. Decoders turn any failure,
// including a panic inside msgpack/v5, into a typed CodeMalformed error.

var encPool = sync.Pool{New: func() any {
	buf := new(bytes.Buffer)
	enc := msgpack.NewEncoder(buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	return &pooledEncoder{buf: buf, enc: enc}
}}

type pooledEncoder struct {
	buf *bytes.Buffer
	enc *msgpack.Encoder
}

// encode returns the canonical msgpack bytes of v in a fresh slice.
func encode(v any) ([]byte, error) {
	pe := encPool.Get().(*pooledEncoder)
	defer encPool.Put(pe)
	pe.buf.Reset()
	if err := pe.enc.Encode(v); err != nil {
		return nil, Errorf(CodeInternal, "encode %T: %v", v, err)
	}
	return bytes.Clone(pe.buf.Bytes()), nil
}

// mustEncode is encode for the shapes of this package, whose encoding can
// only fail on a value the host put in an `any` field that msgpack cannot
// represent (a channel, say): such a value is reported, never a panic.
func mustEncode(v any) []byte {
	b, err := encode(v)
	if err != nil {
		b, _ = encode(Output{Commands: []Command{}, Error: asError(err)})
	}
	return b
}

// decode decodes exactly one value from b into v: trailing bytes, a type
// mismatch or a panic of the decoder are CodeMalformed.
func decode(b []byte, v any, what string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Errorf(CodeMalformed, "%s: decoder panic: %v", what, p)
		}
	}()
	if len(b) == 0 {
		return Errorf(CodeMalformed, "%s: empty input", what)
	}
	if !nestingOK(b) {
		return Errorf(CodeMalformed, "%s: nested deeper than %d levels or truncated", what, maxNesting)
	}
	r := bytes.NewReader(b)
	dec := msgpack.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return Errorf(CodeMalformed, "%s: %v", what, err)
	}
	if r.Len() != 0 {
		return Errorf(CodeMalformed, "%s: %d trailing bytes", what, r.Len())
	}
	return nil
}

// asError converts any error into the kit's typed error.
func asError(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return Errorf(CodeInternal, "%v", err)
}

// EncodeFrames encodes one WebSocket message: a msgpack array of frames.
func EncodeFrames(frames []Frame) []byte {
	if frames == nil {
		frames = []Frame{}
	}
	return mustEncodeStrict(frames)
}

// mustEncodeStrict encodes protocol shapes; an unencodable `any` inside is
// a programming error of the caller and is reported as an empty result.
func mustEncodeStrict(v any) []byte {
	b, err := encode(v)
	if err != nil {
		return nil
	}
	return b
}

// DecodeFrames decodes one WebSocket message into its frames. It checks the
// shape only (a non-empty array of maps); the meaning of each frame (its
// kind, its part) is checked by ValidateFrame.
func DecodeFrames(b []byte) ([]Frame, error) {
	var frames []Frame
	r := reader{b: b}
	n, ok := r.arrayHeader()
	if !ok {
		return nil, Errorf(CodeMalformed, "frames: not a msgpack array")
	}
	if n == 0 {
		return nil, Errorf(CodeMalformed, "frames: empty array")
	}
	frames = make([]Frame, 0, min(n, 1024))
	for range n {
		start := r.i
		if !r.skip() {
			return nil, Errorf(CodeMalformed, "frames: truncated frame %d", len(frames)+1)
		}
		f, err := decodeFrame(b[start:r.i])
		if err != nil {
			return nil, err
		}
		frames = append(frames, f)
	}
	if !r.done() {
		return nil, Errorf(CodeMalformed, "frames: %d trailing bytes", len(b)-r.i)
	}
	return frames, nil
}

// decodeFrame decodes the bytes of one frame map with the generic decoder.
func decodeFrame(b []byte) (Frame, error) {
	var f Frame
	if len(b) == 0 || !(b[0]&0xf0 == 0x80 || b[0] == 0xde || b[0] == 0xdf) {
		return f, Errorf(CodeMalformed, "frame: not a msgpack map")
	}
	if fastFrame(b, &f) {
		return f, nil
	}
	f = Frame{}
	if err := decode(b, &f, "frame"); err != nil {
		return Frame{}, err
	}
	return f, nil
}

// EncodePage encodes a messages() page.
func EncodePage(p MessagePage) []byte {
	if p.Items == nil {
		p.Items = []Message{}
	}
	return mustEncodeStrict(&p)
}

// DecodePage decodes a messages() page and validates every message in it.
func DecodePage(b []byte) (MessagePage, error) {
	var p MessagePage
	if !fastPage(b, &p) {
		p = MessagePage{}
		if err := decode(b, &p, "page"); err != nil {
			return MessagePage{}, err
		}
	}
	if err := ValidatePage(p); err != nil {
		return MessagePage{}, err
	}
	return p, nil
}

// EncodeEvent encodes an event for HandleBytes.
func EncodeEvent(ev Event) []byte { return mustEncodeStrict(&ev) }

// DecodeEvent decodes the bytes given to HandleBytes.
func DecodeEvent(b []byte) (Event, error) {
	var ev Event
	if err := decode(b, &ev, "event"); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// EncodeOutput encodes the answer of HandleBytes. It is byte-identical to
// the output HandleBytes builds by hand (see output.go).
func EncodeOutput(o Output) []byte {
	return appendOutput(nil, o.Commands, o.Error)
}

// DecodeOutput decodes the answer of HandleBytes.
func DecodeOutput(b []byte) (Output, error) {
	var o Output
	if err := decode(b, &o, "output"); err != nil {
		return Output{}, err
	}
	return o, nil
}

// EncodeView encodes a view.
func EncodeView(v View) []byte {
	if v.Messages == nil {
		v.Messages = []Message{}
	}
	return mustEncode(&v)
}

// DecodeView decodes a view.
func DecodeView(b []byte) (View, error) {
	var v View
	if err := decode(b, &v, "view"); err != nil {
		return View{}, err
	}
	return v, nil
}

// EncodeMessage encodes one message.
func EncodeMessage(m Message) []byte {
	if m.Parts == nil {
		m.Parts = []Part{}
	}
	return mustEncodeStrict(&m)
}

// DecodeMessage decodes one message (shape only; see ValidateMessage).
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	if err := decode(b, &m, "message"); err != nil {
		return Message{}, err
	}
	return m, nil
}

// errf wraps a lower error with context, keeping its code.
func errf(err error, format string, args ...any) *Error {
	e := asError(err)
	return &Error{Code: e.Code, Message: fmt.Sprintf(format, args...) + ": " + e.Message}
}
