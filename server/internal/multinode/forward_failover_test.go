package multinode

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// The owner dies (kill -9: it leaves NATS, renews and releases nothing)
// before b forwards a post: no node answers on its subject, b waits for
// its lease to lapse, takes the session over and serves the post itself.
func TestForwardToADeadOwnerIsServedAfterTakeover(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	sid := exchangeOn(t, a.node)
	_, epoch := lease(t, db, sid)

	a.store.stalled.Store(true)
	a.nc.Close()
	killed := time.Now()
	r := b.send("POST", "/v1/sessions/"+sid+"/messages", postBody("after the kill"), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("post on b: %d %s", r.status, r.body)
	}
	took := time.Since(killed)
	t.Logf("served by b %s after the kill (TTL %s)", took, ttl)
	if took > ttl+forwardTimeout {
		t.Errorf("took %s, over the TTL plus one forward timeout", took)
	}
	if h, e := lease(t, db, sid); h != "node-b" || e <= epoch {
		t.Fatalf("lease %s at epoch %d after the takeover (was epoch %d)", h, e, epoch)
	}
	waitFor(t, 5*time.Second, "b's turn", func() bool {
		h := b.history(sid)
		return len(h) == 4 && h[3].State == synccore.MessageDone
	})
	if got := userTexts(b.history(sid)); len(got) != 2 || got[1] != "after the kill" {
		t.Fatalf("user messages: %q", got)
	}
}

// The owner stalls in the middle of a forwarded post (its commit hangs and
// its renewals stop, as in a paused process). b's forward times out, b
// waits for the lease to lapse, takes the session over and serves the
// post under the same idempotency key; when a wakes up, its commit of the
// same post is fenced. The post is in the session once, and a client's
// retry through c gets the same answer.
func TestForwardToAStalledOwnerIsServedOnceAfterTakeover(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := exchangeOn(t, a.node)

	a.gate.arm()
	defer a.gate.open()
	key := map[string]string{"Idempotency-Key": "stalled-post"}
	done := make(chan reply, 1)
	go func() { done <- b.send("POST", "/v1/sessions/"+sid+"/messages", postBody("during the stall"), key) }()
	a.gate.waitHeld(t) // a runs b's post and is stuck committing it
	a.store.stalled.Store(true)

	r := <-done
	if r.status != http.StatusCreated {
		t.Fatalf("post on b: %d %s", r.status, r.body)
	}
	if h, _ := lease(t, db, sid); h != "node-b" {
		t.Fatalf("lease held by %s after the stall", h)
	}
	a.gate.open() // a wakes up: its commit meets the fence
	if err := a.gate.lateCommit(t); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a's late commit: %v, want fenced", err)
	}
	waitFor(t, 5*time.Second, "b's turn", func() bool {
		h := b.history(sid)
		return h[len(h)-1].Role == synccore.RoleAgent && h[len(h)-1].State == synccore.MessageDone
	})
	retry := c.send("POST", "/v1/sessions/"+sid+"/messages", postBody("during the stall"), key)
	if retry.status != http.StatusCreated || !bytes.Equal(retry.body, r.body) {
		t.Fatalf("retry through c: %d %s, first %s", retry.status, retry.body, r.body)
	}
	if got := userTexts(b.history(sid)); len(got) != 2 || got[1] != "during the stall" {
		t.Fatalf("user messages: %q", got)
	}
}

// The owner is slow but alive (a commit hangs, its lease renews): b's
// forward times out and the lease does not lapse, so the client gets the
// typed 503 closed with Retry-After, not a second post. Once the owner's
// commit lands, the client's retry with the same key answers that post.
func TestForwardToASlowOwnerGetsATypedErrorAndARetryPostsOnce(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	sid := exchangeOn(t, a.node)
	_, epoch := lease(t, db, sid)

	a.gate.arm()
	defer a.gate.open()
	key := map[string]string{"Idempotency-Key": "slow-post"}
	start := time.Now()
	r := b.send("POST", "/v1/sessions/"+sid+"/messages", postBody("to a slow owner"), key)
	var te synccore.Error
	if r.status != http.StatusServiceUnavailable || json.Unmarshal(r.body, &te) != nil || te.Code != synccore.CodeClosed ||
		!strings.Contains(te.Message, `"node-a"`) || r.header.Get("Retry-After") == "" {
		t.Fatalf("post on b to a slow owner: %d %v %s", r.status, r.header, r.body)
	}
	t.Logf("refused after %s (forward timeout %s, TTL %s)", time.Since(start), forwardTimeout, ttl)
	a.gate.open()
	if err := a.gate.lateCommit(t); err != nil {
		t.Fatalf("a's late commit: %v", err)
	}
	retry := b.send("POST", "/v1/sessions/"+sid+"/messages", postBody("to a slow owner"), key)
	if retry.status != http.StatusCreated {
		t.Fatalf("retry: %d %s", retry.status, retry.body)
	}
	var m synccore.Message
	if err := json.Unmarshal(retry.body, &m); err != nil || m.Parts[0].Text != "to a slow owner" {
		t.Fatalf("retry answered %s", retry.body)
	}
	waitFor(t, 5*time.Second, "a's turn", func() bool {
		h := a.history(sid)
		return h[len(h)-1].Role == synccore.RoleAgent && h[len(h)-1].State == synccore.MessageDone
	})
	if got := userTexts(a.history(sid)); len(got) != 2 {
		t.Fatalf("user messages: %q", got)
	}
	if h, e := lease(t, db, sid); h != "node-a" || e != epoch {
		t.Fatalf("the lease moved to %s at epoch %d", h, e)
	}
}

// Without NATS, nodes do not forward: a session another live node serves
// is refused 409 conflict naming that node, as before.
func TestWithoutNATSAnotherNodesSessionIsRefused(t *testing.T) {
	db := pg.Database(t)
	a := startNode(t, db, "node-a", ttl, nil)
	b := startNode(t, db, "node-b", ttl, nil)
	sid := exchangeOn(t, a)
	s := "/v1/sessions/" + sid
	for _, req := range [][2]string{
		{"POST", s + "/messages"}, {"POST", s + "/actions"}, {"POST", s + "/interactions/int_x"}, {"DELETE", s},
	} {
		body := map[string]string{"POST " + s + "/messages": postBody("hi"), "POST " + s + "/actions": `{"action_type":"stop"}`,
			"POST " + s + "/interactions/int_x": `{"response":{"approved":true}}`}[req[0]+" "+req[1]]
		r := b.call(req[0], req[1], body)
		if r.status != http.StatusConflict || r.err.Code != synccore.CodeConflict || !strings.Contains(r.err.Message, `"node-a"`) {
			t.Fatalf("%s %s on b: %d %s", req[0], req[1], r.status, r.body)
		}
	}
	if h, _ := lease(t, db, sid); h != "node-a" {
		t.Fatalf("the lease moved to %s", h)
	}
}
