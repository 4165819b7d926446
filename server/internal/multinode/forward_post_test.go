package multinode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// postBody is a user message with one text part.
func postBody(text string) string {
	b, _ := json.Marshal(map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}})
	return string(b)
}

// Three nodes on one database and one NATS server. A session served by a
// is posted to on b and c: the request runs on a (b and c never take the
// lease: same holder, same epoch), and the client gets a's answer, byte
// for byte what a answers the same request (JSON and msgpack).
func TestForwardedPostRunsOnTheOwner(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := exchangeOn(t, a.node)
	holder, epoch := lease(t, db, sid)
	if holder != "node-a" {
		t.Fatalf("lease held by %q", holder)
	}

	path := "/v1/sessions/" + sid + "/messages"
	for i, via := range []*fwdNode{b, c} {
		for _, accept := range []string{"application/json", "application/msgpack"} {
			h := map[string]string{"Accept": accept, "Idempotency-Key": fmt.Sprintf("k-%d-%s", i, accept)}
			text := fmt.Sprintf("via %s as %s", via.name, accept)
			fwd := via.send("POST", path, postBody(text), h)
			if fwd.status != http.StatusCreated {
				t.Fatalf("post on %s: %d %s", via.name, fwd.status, fwd.body)
			}
			// The same request on the owner is a retry: it answers the
			// message the forwarded post committed, as the owner encodes it.
			direct := a.send("POST", path, postBody(text), h)
			if direct.status != fwd.status || !bytes.Equal(direct.body, fwd.body) ||
				direct.header.Get("Content-Type") != fwd.header.Get("Content-Type") {
				t.Fatalf("forwarded answer differs from the owner's:\n%d %s %q\n%d %s %q", fwd.status,
					fwd.header.Get("Content-Type"), fwd.body, direct.status, direct.header.Get("Content-Type"), direct.body)
			}
			waitFor(t, 5*time.Second, "the turn on a", func() bool {
				h := a.history(sid)
				return h[len(h)-1].Role == synccore.RoleAgent && h[len(h)-1].State == synccore.MessageDone
			})
		}
	}
	if h, e := lease(t, db, sid); h != holder || e != epoch {
		t.Fatalf("the lease moved to %s at epoch %d (was %s at %d)", h, e, holder, epoch)
	}
	if got := userTexts(a.history(sid)); len(got) != 5 {
		t.Fatalf("user messages: %q", got)
	}
}

// An approval answered on c reaches the interaction pending in a's turn:
// the turn goes on, on a, to its end.
func TestForwardedAnswerReachesThePendingInteraction(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := a.createSession()
	if r := a.post(sid, "scenario:approval"); r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.body)
	}
	var interaction string
	waitFor(t, 10*time.Second, "a pending approval", func() bool {
		for _, m := range a.history(sid) {
			for _, p := range m.Parts {
				if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
					interaction = p.InteractionID
					return true
				}
			}
		}
		return false
	})
	_, epoch := lease(t, db, sid)

	r := c.send("POST", "/v1/sessions/"+sid+"/interactions/"+interaction, `{"response":{"approved":true}}`, nil)
	if r.status != http.StatusOK {
		t.Fatalf("answer on c: %d %s", r.status, r.body)
	}
	var msg synccore.Message
	if err := json.Unmarshal(r.body, &msg); err != nil {
		t.Fatal(err)
	}
	if p := interactionPart(msg, interaction); p == nil || p.Status != synccore.InteractionResolved {
		t.Fatalf("the answer's message: %+v", msg)
	}
	waitFor(t, 10*time.Second, "the approved turn's end on a", func() bool {
		h := a.history(sid)
		last := h[len(h)-1]
		if last.State != synccore.MessageDone {
			return false
		}
		for _, p := range last.Parts {
			if p.Type == synccore.PartTool && p.State == synccore.ToolOutputAvailable {
				return true
			}
		}
		t.Fatalf("the turn ended without the tool's output: %+v", last)
		return false
	})
	if h, e := lease(t, db, sid); h != "node-a" || e != epoch {
		t.Fatalf("the lease moved to %s at epoch %d", h, e)
	}
	// Answered once: a second answer is not pending.
	again := c.call("POST", "/v1/sessions/"+sid+"/interactions/"+interaction, `{"response":{"approved":true}}`)
	if again.status != http.StatusConflict || again.err.Code != synccore.CodeNotPending {
		t.Fatalf("second answer: %d %s", again.status, again.body)
	}
}

func interactionPart(m synccore.Message, id string) *synccore.Part {
	for i := range m.Parts {
		if m.Parts[i].Type == synccore.PartInteraction && m.Parts[i].InteractionID == id {
			return &m.Parts[i]
		}
	}
	return nil
}

// Bad input sent to a node that forwards gets the typed error the owner
// gives the same request: whether the forwarding node refuses it before
// the claim (a body that does not decode, an invalid part) or the owner
// does (an unknown action or interaction). Nothing is committed.
func TestForwardedBadInputGetsTheOwnersError(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	small := func(c *server.Config) { c.Limits.MaxBodyBytes = 4 << 10 }
	a := startForwardingNode(t, db, "node-a", ns, small)
	b := startForwardingNode(t, db, "node-b", ns, small)
	c := startForwardingNode(t, db, "node-c", ns, small)
	sid := exchangeOn(t, a.node)
	before := a.history(sid)
	s := "/v1/sessions/" + sid
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'k'
	}
	bad := []struct {
		method, path, body string
		header             map[string]string
		code               string
	}{
		{"POST", s + "/messages", `{"parts":[]}`, nil, synccore.CodeInvalidMessage},
		{"POST", s + "/messages", `{"parts":[{"type":"text"}]}`, nil, synccore.CodeInvalidPart},
		{"POST", s + "/messages", `{"parts":[{"type":"hologram","text":"x"}]}`, nil, synccore.CodeUnknownPartType},
		{"POST", s + "/messages", `{"parts":`, nil, synccore.CodeMalformed},
		{"POST", s + "/messages", `{"parts":[]}`, map[string]string{"Content-Type": "text/plain"}, synccore.CodeBadRequest},
		{"POST", s + "/messages", postBody(string(make([]byte, 5<<10))), nil, synccore.CodeTooLarge},
		{"POST", s + "/messages", postBody("hi"), map[string]string{"Idempotency-Key": string(long)}, synccore.CodeBadRequest},
		{"POST", s + "/messages", postBody("hi"), map[string]string{"Content-Type": "application/msgpack"}, synccore.CodeMalformed},
		{"POST", s + "/actions", `{"action_type":"fly"}`, nil, synccore.CodeBadRequest},
		{"POST", s + "/actions", `{"action_type":"set_model","value":"no-such-model"}`, nil, synccore.CodeBadRequest},
		{"POST", s + "/actions", `{"action_type":"retry"}`, nil, synccore.CodeConflict},
		{"POST", s + "/interactions/int_nope", `{"response":{"approved":true}}`, nil, synccore.CodeNotFound},
		{"POST", s + "/interactions/int_nope", `{}`, nil, synccore.CodeBadRequest},
		{"DELETE", "/v1/sessions/ses_nope", ``, nil, synccore.CodeNotFound},
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, i := range rng.Perm(len(bad)) {
		req := bad[i]
		via := []*fwdNode{b, c}[rng.IntN(2)]
		for _, accept := range []string{"application/json", "application/msgpack"} {
			h := map[string]string{"Accept": accept}
			for k, v := range req.header {
				h[k] = v
			}
			direct := a.send(req.method, req.path, req.body, h)
			fwd := via.send(req.method, req.path, req.body, h)
			if direct.status != wire.HTTPStatus(req.code) || !bytes.Equal(direct.body, fwd.body) || direct.status != fwd.status ||
				direct.header.Get("Content-Type") != fwd.header.Get("Content-Type") {
				t.Fatalf("%s %s %.40q via %s (%s): owner %d %q, forwarded %d %q (want %s)", req.method, req.path, req.body,
					via.name, accept, direct.status, direct.body, fwd.status, fwd.body, req.code)
			}
		}
	}
	if after := a.history(sid); len(after) != len(before) {
		t.Fatalf("bad input committed: %s -> %s", summary(before), summary(after))
	}
	if h, _ := lease(t, db, sid); h != "node-a" {
		t.Fatalf("the lease moved to %s", h)
	}
}

// Randomised: posts with keys from a small pool go to random nodes, from
// several clients at once, so the same key is often retried through
// another node, sometimes concurrently. Every answer to a key is the
// first one, byte for byte, and the session holds each key's message once.
func TestForwardedRetriesNeverDoublePost(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	nodes := []*fwdNode{a, b, c}
	sid := exchangeOn(t, a.node)
	_, epoch := lease(t, db, sid)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	const clients, perClient, keys = 4, 12, 10
	var mu sync.Mutex
	first := map[string][]byte{}
	var wg sync.WaitGroup
	for w := range clients {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perClient {
				key := fmt.Sprintf("key-%d", rng.IntN(keys))
				via := nodes[rng.IntN(len(nodes))]
				r := via.send("POST", "/v1/sessions/"+sid+"/messages", postBody("text of "+key), map[string]string{"Idempotency-Key": key})
				if r.status != http.StatusCreated {
					t.Errorf("post %s on %s: %d %s", key, via.name, r.status, r.body)
					return
				}
				mu.Lock()
				if prev, ok := first[key]; !ok {
					first[key] = r.body
				} else if !bytes.Equal(prev, r.body) {
					t.Errorf("retry of %s on %s answered %s, first %s", key, via.name, r.body, prev)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	count := map[string]int{}
	for _, text := range userTexts(a.history(sid)) {
		count[text]++
	}
	for key := range first {
		if n := count["text of "+key]; n != 1 {
			t.Errorf("%s posted %d times", key, n)
		}
	}
	if len(count) != len(first)+1 { // + the exchange's "hello"
		t.Errorf("user messages %v for keys %d", count, len(first))
	}
	if h, e := lease(t, db, sid); h != "node-a" || e != epoch {
		t.Fatalf("the lease moved to %s at epoch %d", h, e)
	}
}

// Actions and a delete sent to nodes that do not serve the session run on
// the one that does: set_model through c changes a's session, the delete
// through b removes it for every node.
func TestForwardedActionAndDelete(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := exchangeOn(t, a.node)
	_, epoch := lease(t, db, sid)

	r := c.call("POST", "/v1/sessions/"+sid+"/actions", `{"action_type":"set_approval_mode","value":"ask"}`)
	var msg synccore.Message
	if r.status != http.StatusOK || json.Unmarshal(r.body, &msg) != nil || len(msg.Parts) == 0 ||
		msg.Parts[len(msg.Parts)-1].Type != synccore.PartAction {
		t.Fatalf("action on c: %d %s", r.status, r.body)
	}
	if h, e := lease(t, db, sid); h != "node-a" || e != epoch {
		t.Fatalf("the lease moved to %s at epoch %d", h, e)
	}
	if r := b.call("DELETE", "/v1/sessions/"+sid, ""); r.status != http.StatusNoContent {
		t.Fatalf("delete on b: %d %s", r.status, r.body)
	}
	for _, n := range []*fwdNode{a, b, c} {
		if r := n.call("GET", "/v1/sessions/"+sid+"/messages", ""); r.status != http.StatusNotFound {
			t.Fatalf("messages on %s after the delete: %d %s", n.name, r.status, r.body)
		}
		if r := n.post(sid, "after the delete"); r.status != http.StatusNotFound {
			t.Fatalf("post on %s after the delete: %d %s", n.name, r.status, r.body)
		}
	}
}
