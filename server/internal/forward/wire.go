package forward

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Headers are the request headers a forward carries: those that shape the
// owner's answer (encodings) or its effect (the idempotency key). Others
// (Authorization, Origin, cookies) were checked by the receiving node and
// stay there.
var Headers = []string{"Content-Type", "Accept", "Idempotency-Key", "Traceparent", "Tracestate"}

// AnswerHeaders are the response headers the owner's answer keeps on its
// way back to the client.
var AnswerHeaders = []string{"Content-Type", "Retry-After"}

// Request is one forwarded HTTP request.
type Request struct {
	From      string            `msgpack:"from"`      // the forwarding node, for logs
	Principal string            `msgpack:"principal"` // who the request acts for, authenticated by From
	Method    string            `msgpack:"method"`
	Path      string            `msgpack:"path"` // with the query, if any
	Header    map[string]string `msgpack:"header,omitempty"`
	Body      []byte            `msgpack:"body,omitempty"`
	// TimeoutMs is how long From waits for the answer: the owner stops
	// working on the request after it too.
	TimeoutMs int64 `msgpack:"timeout_ms"`
}

// Response is the owner's answer.
type Response struct {
	Status int               `msgpack:"status"`
	Header map[string]string `msgpack:"header,omitempty"`
	Body   []byte            `msgpack:"body,omitempty"`
	// NotServed: the node did not run the request, as it does not serve the
	// session (any more: another node took the lease, or it is stopping).
	// Status and Body are its refusal; the forwarding node may claim the
	// session again and retry.
	NotServed bool `msgpack:"not_served,omitempty"`
}

func encode(v any) ([]byte, error) { return msgpack.Marshal(v) }

func decode(data []byte, v any) error {
	if err := msgpack.Unmarshal(data, v); err != nil {
		return fmt.Errorf("forward: decode %T: %w", v, err)
	}
	return nil
}
