package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/agentsync/agentsync/server/internal/forward"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// The AI SDK's POST /v1/chat on a node that does not serve the session (a
// cluster with NATS): the write it makes (a post, or an approval's answer)
// runs on the node that serves the session, sent there as the same
// endpoint of our own API would be (forward.go), and the reply streams
// from this node's subscription, which follows that node's frames
// (natsfan). The client sees one stream, as from the owner.

// chatElsewhere takes the outcome err of a chat's write tried here. When
// another node serves the session, it sends the write there as method
// path (escaped) with body in JSON and returns the owner's answer (its body when the
// status is want, else its typed refusal); otherwise it returns err as it
// is. A forward that found no answer is 503 closed with Retry-After.
func (a *api) chatElsewhere(w http.ResponseWriter, r *http.Request, err error, method, path string, body any, want int) ([]byte, error) {
	return a.writeElsewhere(w, r, err, method, path, body, want, newForwardKey())
}

// writeElsewhere is chatElsewhere with the forward's Idempotency-Key
// given (the same key for the same write on every try); a status of 204
// is an answer too, with no body (nil, nil).
func (a *api) writeElsewhere(w http.ResponseWriter, r *http.Request, err error, method, path string, body any, want int, key string) ([]byte, error) {
	var oe *session.OwnedElsewhere
	if a.fwd == nil || !errors.As(err, &oe) {
		return nil, err
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	fr := r.Clone(r.Context())
	fr.Method = method
	if fr.URL, err = url.Parse(path); err != nil {
		return nil, err
	}
	// A post keeps one key across the owner's retries (session/idempotent.go).
	fr.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"},
		"Idempotency-Key": {key}}
	resp, err := a.forwardTraced(r.Context(), oe.Node, a.forwardRequest(fr, data))
	switch {
	case errors.Is(err, forward.ErrUnreachable) || errors.Is(err, forward.ErrTimeout) || (err == nil && resp.NotServed):
		setRetryAfterLease(w, oe)
		return nil, synccore.Errorf(synccore.CodeClosed,
			"session %q is served by node %q, which did not take this chat's write from node %q; retry", oe.SessionID, oe.Node, a.fwd.Node())
	case err != nil:
		return nil, err
	case resp.Status == want:
		return resp.Body, nil
	case resp.Status == http.StatusNoContent:
		return nil, nil
	}
	refusal := &synccore.Error{}
	if err := json.Unmarshal(resp.Body, refusal); err != nil || refusal.Code == "" {
		return nil, fmt.Errorf("node %q answered the chat's write %d with %q", oe.Node, resp.Status, resp.Body)
	}
	return nil, refusal
}
