package multinode

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// streaming waits until sid's agent message is committed streaming on n,
// then a little more, so its text is under way.
func streaming(t *testing.T, n *node, sid string) {
	t.Helper()
	waitFor(t, 10*time.Second, "the answer streaming", func() bool {
		h := n.history(sid)
		return len(h) >= 2 && h[len(h)-1].Role == synccore.RoleAgent && h[len(h)-1].State == synccore.MessageStreaming
	})
	time.Sleep(200 * time.Millisecond)
}

// NATS restarts while a's answer streams: every node loses its connection,
// so the subscribers of nodes that follow the session are resynced
// (owner_changed); while NATS is down they are refused (503, retryable)
// and back off; once it is back they follow again, and every client
// converges on the digest. The owner's commits never stop.
func TestNATSRestartMidStream(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", steadyTTL, paced)
	b := startNATSNode(t, db, ns, "node-b", steadyTTL, paced)
	c := startNATSNode(t, db, ns, "node-c", steadyTTL, paced)
	sid := a.createSession()
	mustStatus(t, "post on a", a.post(sid, "scenario:text chars=6000 delta=4"), http.StatusCreated)
	streaming(t, a, sid)

	crowd := newCrowd(t)
	for i, n := range []*node{a, b, b, c, c} {
		crowd.join(n, sid, time.Duration(i%2)*500*time.Millisecond)
	}
	watchB, r := b.subscribe(sid)
	if watchB == nil {
		t.Fatalf("subscribe on b: %d %s", r.status, r.body)
	}
	ns.Restart(t, 300*time.Millisecond)
	if !resyncedFor(t, watchB, fanout.ResyncOwnerChanged, 10*time.Second) {
		t.Fatal("b's subscriber was not resynced when b lost NATS")
	}
	turnDone(t, a, sid, 2, 30*time.Second)
	crowd.converge(a, sid, 20*time.Second)
}

// The owner dies mid-stream (in-process: its leases stay taken, its NATS
// connection and its clients' connections drop). Clients following on b
// and c wait; within the lease bound b takes the session on the next
// post, closes the dead node's message "interrupted" and serves the next
// turn, and every client converges on the digest.
func TestOwnerKilledMidStream(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", ttl, paced)
	b := startNATSNode(t, db, ns, "node-b", ttl, paced)
	c := startNATSNode(t, db, ns, "node-c", ttl, paced)
	sid := a.createSession()
	mustStatus(t, "post on a", a.post(sid, "scenario:text chars=6000 delta=4"), http.StatusCreated)
	streaming(t, a, sid)

	crowd := newCrowd(t)
	for i, n := range []*node{b, b, c, c} {
		crowd.join(n, sid, time.Duration(i%2)*500*time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	a.kill()
	took := postUntilServed(t, b, sid, "hello from b", time.Now(), ttl)
	t.Logf("b took the session %s after a died (TTL %s)", took, ttl)

	h := turnDone(t, b, sid, 4, 20*time.Second)
	open := h[1]
	if last := open.Parts[len(open.Parts)-1]; open.State != synccore.MessageDone || last.Type != synccore.PartError || last.Code != session.CodeInterrupted {
		t.Fatalf("a's open message after b took over: %+v", open)
	}
	crowd.converge(b, sid, 20*time.Second)
}
