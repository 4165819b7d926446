package multinode

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// The lease TTL of the nodes of these tests, where no node dies: long, so
// a loaded machine never loses a lease by accident.
const steadyTTL = 5 * time.Second

// paced streams the scripted model's text at 2 ms per delta.
func paced(c *server.Config) { c.Speed = model.Speed{Delta: 2 * time.Millisecond} }

// Three nodes on one database and one NATS server. Node a serves the
// session (every post goes there); clients follow it on all three nodes,
// some from before the first turn, some joining mid-stream, half of them
// with their connection cut at random, through a long answer and an
// approval. Every client ends on the server's digest and none ever sees
// a broken stream; a raw subscription that joins c mid-stream gets the
// text streamed so far and then every delta exactly once.
func TestFollowersOnThreeNodes(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", steadyTTL, paced)
	b := startNATSNode(t, db, ns, "node-b", steadyTTL, paced)
	c := startNATSNode(t, db, ns, "node-c", steadyTTL, paced)
	sid := a.createSession()

	// Before any turn no node serves the session: every node streams it
	// from the committed snapshot, and resyncs its clients when a takes it.
	crowd := newCrowd(t)
	for i, n := range []*node{a, b, b, c, c} {
		crowd.join(n, sid, time.Duration(i%2)*400*time.Millisecond)
	}

	mustStatus(t, "post on a", a.post(sid, "scenario:text chars=4000 delta=4"), http.StatusCreated)
	waitFor(t, 10*time.Second, "the answer streaming", func() bool {
		h := a.history(sid)
		return len(h) == 2 && len(h[1].Parts) == 0
	})
	time.Sleep(300 * time.Millisecond)
	raw, r := c.subscribe(sid)
	if raw == nil {
		t.Fatalf("subscribe on c, which does not serve the session: %d %s", r.status, r.body)
	}
	for i, n := range []*node{b, c} {
		crowd.join(n, sid, time.Duration(i)*300*time.Millisecond)
	}
	joined, rebuilt, final := streamedText(t, raw, 20*time.Second)
	t.Logf("c's mid-stream join held %d bytes of %d", joined, len(final))
	if joined == 0 || joined == len(final) {
		t.Errorf("c's mid-stream join held %d bytes of %d: not mid-stream", joined, len(final))
	}
	if rebuilt != final {
		t.Fatalf("the text streamed on c differs from the committed text:\n%q\n%q", rebuilt, final)
	}
	turnDone(t, a, sid, 2, 20*time.Second)

	mustStatus(t, "post on a", a.post(sid, "scenario:approval to=ops@example.com"), http.StatusCreated)
	id := pending(t, a, sid)
	mustStatus(t, "answer on a", a.call("POST", "/v1/sessions/"+sid+"/interactions/"+id, `{"response":{"approved":true}}`), http.StatusOK)
	turnDone(t, a, sid, 4, 20*time.Second)

	crowd.converge(a, sid, 20*time.Second)
}

// A session deleted on the node that serves it ends the subscriptions on
// the nodes that follow it with the same error frame (not_found), and is
// gone for them too.
func TestDeleteReachesFollowers(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", steadyTTL, nil)
	b := startNATSNode(t, db, ns, "node-b", steadyTTL, nil)
	sid := exchangeOn(t, a)
	watchB, r := b.subscribe(sid)
	if watchB == nil {
		t.Fatalf("subscribe on b: %d %s", r.status, r.body)
	}
	// The hello first: b follows the session from here on.
	if _, _, err := watchB.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, "delete on a", a.call("DELETE", "/v1/sessions/"+sid, ""), http.StatusNoContent)
	_ = watchB.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := watchB.ReadMessage()
	if err != nil {
		t.Fatalf("b's subscriber after the delete: %v", err)
	}
	frames, err := wire.DecodeFrames(data)
	if err != nil || frames[0].Kind != synccore.FrameError || frames[0].Code != synccore.CodeNotFound {
		t.Fatalf("b's subscriber after the delete: %+v %v", frames, err)
	}
	if _, r := b.subscribe(sid); r.status != http.StatusNotFound {
		t.Fatalf("subscribe on b to the deleted session: %d %s", r.status, r.body)
	}
}
