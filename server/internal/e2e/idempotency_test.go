package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// On one node too, an Idempotency-Key makes a post safe to retry: the
// retry (during the turn it started, or after) answers the first post's
// message byte for byte and posts nothing; the same key in another
// session is another post; an oversized key is 400 bad_request.
func TestIdempotencyKeyPostsOnce(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid, other := s.createSession(), s.createSession()
	post := func(sid, key string) response {
		return s.do("POST", "/v1/sessions/"+sid+"/messages", textParts("scenario:text chars=200"), "Idempotency-Key: "+key)
	}
	first := post(sid, "k1")
	first.expect(t, http.StatusCreated, nil)
	during := post(sid, "k1")
	s.waitIdle(sid, 2)
	after := post(sid, "k1")
	for _, r := range []response{during, after} {
		if r.Status != http.StatusCreated || !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("retry: %d %s, first %s", r.Status, r.Body, first.Body)
		}
	}
	if msgs := s.all(sid, true); len(msgs) != 2 {
		t.Fatalf("after the retries: %s", summary(msgs))
	}
	var a, b synccore.Message
	first.decode(t, &a)
	post(other, "k1").expect(t, http.StatusCreated, &b)
	if a.MessageID == b.MessageID {
		t.Fatalf("one key, two sessions, one message id %s", a.MessageID)
	}
	post(sid, strings.Repeat("k", 256)).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	if msgs := s.all(sid, true); len(msgs) != 2 {
		t.Fatalf("after the bad key: %s", summary(msgs))
	}
}
