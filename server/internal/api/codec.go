package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

const (
	contentJSON    = "application/json"
	contentMsgpack = "application/msgpack"
)

// wantsMsgpack reports whether the client asked for msgpack answers.
// JSON stays the default so curl and browsers get readable bodies.
func wantsMsgpack(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			mt = strings.ToLower(strings.TrimSpace(mt))
			if mt == contentMsgpack || mt == "application/x-msgpack" {
				return true
			}
		}
	}
	return false
}

// msgpackBuf is a reusable encoder with its buffer: a reused encoder
// without omitempty encodes with no allocations (measured: omitempty costs
// ~14 allocations for an 11-field struct with 3 nested parts).
type msgpackBuf struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

var msgpackPool = sync.Pool{New: func() any {
	b := &msgpackBuf{}
	b.enc = newEncoder(&b.buf)
	return b
}}

// newEncoder is the one msgpack encoder configuration of the server:
// smallest int forms so JavaScript reads plain numbers, msgpack tags only.
func newEncoder(w io.Writer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(w)
	enc.UseCompactInts(true)
	return enc
}

// wireBuf is a reusable buffer for the answers synccore encodes itself.
type wireBuf struct{ b []byte }

var wirePool = sync.Pool{New: func() any { return new(wireBuf) }}

// encodeWire encodes the hot answer types (pages and messages) with
// synccore's reflection-free codec, which writes msgpack/v5's bytes
// without its ~11 allocations per struct; ok is false for other types.
// The caller returns the buffer to wirePool once its bytes are written.
func encodeWire(v any) (w *wireBuf, ok bool, err error) {
	switch x := v.(type) {
	case synccore.MessagePage:
		w = wirePool.Get().(*wireBuf)
		w.b, err = wire.AppendPage(w.b[:0], &x)
		return w, true, err
	case synccore.Message:
		w = wirePool.Get().(*wireBuf)
		w.b, err = wire.AppendMessage(w.b[:0], &x)
		return w, true, err
	}
	return nil, false, nil
}

// writeValue answers status with v encoded as msgpack or JSON.
func (a *api) writeValue(w http.ResponseWriter, r *http.Request, status int, v any) {
	if !wantsMsgpack(r) {
		body, err := json.Marshal(v)
		if err != nil {
			a.encodeFailed(w, r, err)
			return
		}
		writeBody(w, status, contentJSON, append(body, '\n'))
		return
	}
	if fast, ok, err := encodeWire(v); ok {
		defer wirePool.Put(fast)
		if err != nil {
			a.encodeFailed(w, r, err)
			return
		}
		writeBody(w, status, contentMsgpack, fast.b)
		return
	}
	b := msgpackPool.Get().(*msgpackBuf)
	defer msgpackPool.Put(b)
	b.buf.Reset()
	if err := b.enc.Encode(v); err != nil {
		a.encodeFailed(w, r, err)
		return
	}
	writeBody(w, status, contentMsgpack, b.buf.Bytes())
}

func writeBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// encodeFailed reports a value the server could not encode: a server bug
// (e.g. an unencodable value in a part's data), never the client's fault.
func (a *api) encodeFailed(w http.ResponseWriter, r *http.Request, err error) {
	a.log.Error("encode response", "path", r.URL.Path, "err", err)
	http.Error(w, `{"code":"internal","message":"internal error"}`, http.StatusInternalServerError)
}

// decodeBody reads a request body of at most maxBody bytes into v, as
// msgpack when Content-Type says so and as JSON otherwise. Every failure is
// typed: too_large, malformed (does not decode) or bad_request (wrong shape).
func (a *api) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	_, err := a.decodeBodyOptional(w, r, v)
	return err
}

// decodeBodyOptional is decodeBody for endpoints whose body may be empty;
// it reports whether there was one (an empty body is the only failure
// with false).
func (a *api) decodeBodyOptional(w http.ResponseWriter, r *http.Request, v any) (bool, error) {
	if r.ContentLength > a.maxBody {
		return true, synccore.Errorf(synccore.CodeTooLarge, "body of %d bytes is over the limit of %d", r.ContentLength, a.maxBody)
	}
	isMsgpack, err := requestIsMsgpack(r)
	if err != nil {
		return true, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return true, synccore.Errorf(synccore.CodeTooLarge, "body is over the limit of %d bytes", a.maxBody)
		}
		return true, synccore.Errorf(synccore.CodeBadRequest, "read body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return false, synccore.Errorf(synccore.CodeMalformed, "empty body")
	}
	if isMsgpack {
		return true, decodeMsgpack(body, v)
	}
	return true, decodeJSON(body, v)
}

// requestIsMsgpack reads the body's media type. A missing Content-Type is
// JSON (curl -d without -H); an unknown one is refused rather than guessed.
func requestIsMsgpack(r *http.Request) (bool, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return false, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, synccore.Errorf(synccore.CodeBadRequest, "bad Content-Type %q", ct)
	}
	switch {
	case mt == contentMsgpack || mt == "application/x-msgpack":
		return true, nil
	case mt == contentJSON || strings.HasSuffix(mt, "+json"):
		return false, nil
	default:
		return false, synccore.Errorf(synccore.CodeBadRequest, "unsupported Content-Type %q: use %s or %s", mt, contentJSON, contentMsgpack)
	}
}

func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return synccore.Errorf(synccore.CodeBadRequest, "field %q: want %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)
		}
		return synccore.Errorf(synccore.CodeMalformed, "body is not valid JSON: %v", err)
	}
	if dec.More() {
		return synccore.Errorf(synccore.CodeMalformed, "body has data after the JSON value")
	}
	return nil
}

func decodeMsgpack(body []byte, v any) error {
	br := bytes.NewReader(body)
	if err := msgpack.NewDecoder(br).Decode(v); err != nil {
		return synccore.Errorf(synccore.CodeMalformed, "body is not valid msgpack of the expected shape: %v", err)
	}
	if br.Len() > 0 {
		return synccore.Errorf(synccore.CodeMalformed, "body has data after the msgpack value")
	}
	return nil
}
