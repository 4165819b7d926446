package uploads

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

func mkdir(dir string) error { return os.MkdirAll(dir, 0o750) }

// typedWriter turns tusd's plain-text error answers ("ERR_CODE: message")
// into the protocol's typed {code, message} body, with the code of the
// status (docs/protocol.md §3); answers that are already typed pass.
type typedWriter struct {
	http.ResponseWriter
	head    bool
	maxSize int64
	status  int
	buf     []byte
	capture bool
}

func (t *typedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *typedWriter) WriteHeader(status int) {
	if t.status != 0 {
		return
	}
	t.status = status
	if status >= 400 && !strings.HasPrefix(t.Header().Get("Content-Type"), "application/json") {
		t.capture = true
		return
	}
	t.ResponseWriter.WriteHeader(status)
}

func (t *typedWriter) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.WriteHeader(http.StatusOK)
	}
	if t.capture {
		t.buf = append(t.buf, b...)
		return len(b), nil
	}
	return t.ResponseWriter.Write(b)
}

// fail answers err, typed.
func (t *typedWriter) fail(err *synccore.Error) {
	t.Header().Set("Content-Type", "application/json")
	t.Header().Del("Content-Length")
	t.status = wire.HTTPStatus(err.Code)
	t.ResponseWriter.WriteHeader(t.status)
	if !t.head {
		_ = json.NewEncoder(t.ResponseWriter).Encode(err)
	}
}

// finish writes a captured error answer as a typed one.
func (t *typedWriter) finish() {
	if !t.capture {
		return
	}
	tusCode, msg, _ := strings.Cut(strings.TrimSpace(string(t.buf)), ": ")
	var te *synccore.Error
	switch {
	case tusCode == "ERR_MAX_SIZE_EXCEEDED" || t.status == http.StatusRequestEntityTooLarge:
		te = synccore.Errorf(synccore.CodeTooLarge, "file over the %d-byte limit", t.maxSize)
	case msg == "":
		te = synccore.Errorf(wire.CodeForHTTPStatus(t.status), "%s", http.StatusText(t.status))
	default:
		te = synccore.Errorf(wire.CodeForHTTPStatus(t.status), "%s (%s)", msg, tusCode)
	}
	t.Header().Set("Content-Type", "application/json")
	t.Header().Del("Content-Length")
	t.ResponseWriter.WriteHeader(t.status)
	if !t.head {
		_ = json.NewEncoder(t.ResponseWriter).Encode(te)
	}
}
