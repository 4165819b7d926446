package multinode

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/internal/forward"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/natsbus"
	"github.com/agentsync/agentsync/synccore"
)

// tokenIsPrincipal lets a bearer token in as the principal of its name.
var tokenIsPrincipal = auth.Func(func(_ *http.Request, token string) (string, error) {
	if token == "" {
		return "", auth.ErrUnauthorized
	}
	return token, nil
})

// The principal travels with the request: alice's post through b runs on
// a as alice; bob cannot reach alice's session through any node; a
// request put on a's subject by hand acts for the principal it names, so
// a checks that one owns the session (and the trust is NATS's).
func TestForwardedRequestActsForItsPrincipal(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	withAuth := func(c *server.Config) { c.Authorizer = tokenIsPrincipal }
	a := startForwardingNode(t, db, "node-a", ns, withAuth)
	b := startForwardingNode(t, db, "node-b", ns, withAuth)
	alice, bob := map[string]string{"Authorization": "Bearer alice"}, map[string]string{"Authorization": "Bearer bob"}

	r := a.send("POST", "/v1/sessions", "{}", alice)
	var s struct {
		SessionID string `json:"session_id"`
	}
	if r.status != http.StatusCreated || json.Unmarshal(r.body, &s) != nil {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	path := "/v1/sessions/" + s.SessionID + "/messages"
	if r := a.send("POST", path, postBody("alice on a"), alice); r.status != http.StatusCreated {
		t.Fatalf("alice on a: %d %s", r.status, r.body)
	}
	if r := b.send("POST", path, postBody("alice via b"), alice); r.status != http.StatusCreated {
		t.Fatalf("alice via b: %d %s", r.status, r.body)
	}
	for _, n := range []*fwdNode{a, b} {
		if r := n.send("POST", path, postBody("bob"), bob); r.status != http.StatusNotFound {
			t.Fatalf("bob on %s: %d %s", n.name, r.status, r.body)
		}
	}
	if h, _ := lease(t, db, s.SessionID); h != "node-a" {
		t.Fatalf("the lease moved to %s", h)
	}

	fwd := forward.NewClient(natsbus.New(b.nc).Conn(), "node-b", forwardTimeout)
	req := func(principal string) *forward.Request {
		return &forward.Request{Principal: principal, Method: "POST", Path: path, Body: []byte(postBody("by hand")),
			Header: map[string]string{"Content-Type": "application/json"}}
	}
	resp, err := fwd.Forward(context.Background(), "node-a", req("bob"))
	if err != nil || resp.Status != http.StatusNotFound || resp.NotServed {
		t.Fatalf("bob by hand: %+v %v", resp, err)
	}
	resp, err = fwd.Forward(context.Background(), "node-a", req("alice"))
	if err != nil || resp.Status != http.StatusCreated {
		t.Fatalf("alice by hand: %+v %v", resp, err)
	}
	if got := userTexts(historyAs(t, a.node, s.SessionID, alice)); strings.Join(got, "|") != "alice on a|alice via b|by hand" {
		t.Fatalf("user messages: %q", got)
	}
}

// A node asked to run a request for a session it does not serve refuses it
// with NotServed and the 409 naming the node that does, so the sender
// claims the session again rather than passing the refusal on; a node
// nobody listens for is ErrUnreachable at once.
func TestForwardToANodeThatDoesNotServeTheSession(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	sid := exchangeOn(t, a.node)

	fwd := forward.NewClient(natsbus.New(a.nc).Conn(), "node-a", forwardTimeout)
	resp, err := fwd.Forward(context.Background(), "node-b", &forward.Request{Method: "POST",
		Path: "/v1/sessions/" + sid + "/messages", Body: []byte(postBody("stale route"))})
	var te synccore.Error
	if err != nil || !resp.NotServed || resp.Status != http.StatusConflict || json.Unmarshal(resp.Body, &te) != nil ||
		!strings.Contains(te.Message, `"node-a"`) {
		t.Fatalf("b's answer for a's session: %+v %v", resp, err)
	}
	if _, err := fwd.Forward(context.Background(), "node-z", &forward.Request{Method: "DELETE", Path: "/v1/sessions/" + sid}); !errors.Is(err, forward.ErrUnreachable) {
		t.Fatalf("forward to a node nobody runs: %v", err)
	}
	if got := userTexts(b.history(sid)); len(got) != 1 {
		t.Fatalf("user messages: %q", got)
	}
}
