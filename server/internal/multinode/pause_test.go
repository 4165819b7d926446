package multinode

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// A paused owner (SIGSTOP, a long GC pause, a frozen VM) wakes up with a
// request queued, its lease taken meanwhile by another node, and its
// memory of the session behind. Here a "pauses" its lease keeping (its
// renewal hangs, as a stopped process's would, for good) while b takes
// the session over once the lease lapsed; then a wakes up (new renewals
// answer again) and gets a request before its stuck renewal could tell it
// the lease is gone.

// pauseOwner stalls a's renewals, waits for a's lease of sid to lapse and
// b to take the session with a post of text, and wakes a up: its next
// renewals answer, but the one the pause caught never returns.
func pauseOwner(t *testing.T, db string, a, b *fwdNode, sid, text string) {
	t.Helper()
	a.store.stalled.Store(true)
	waitFor(t, 10*time.Second, "a's lease to lapse", func() bool { return leaseLapsed(t, db, sid) })
	if r := b.send("POST", "/v1/sessions/"+sid+"/messages", postBody(text), nil); r.status != http.StatusCreated {
		t.Fatalf("post on b once a's lease lapsed: %d %s", r.status, r.body)
	}
	if h, _ := lease(t, db, sid); h != "node-b" {
		t.Fatalf("lease held by %q after b's post", h)
	}
	a.store.stalled.Store(false)
}

// A post queued at the paused ex-owner is served by the new owner
// (forwarded), never refused with the stale lease's 409.
func TestPausedOwnerForwardsAQueuedPost(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	sid := exchangeOn(t, a.node)
	pauseOwner(t, db, a, b, sid, "hello from b")
	turnDone(t, b.node, sid, 4, 10*time.Second)

	r := a.send("POST", "/v1/sessions/"+sid+"/messages", postBody("queued at a"), nil)
	if r.status != http.StatusCreated {
		t.Fatalf("post queued at the paused ex-owner: %d %s", r.status, r.body)
	}
	h := turnDone(t, b.node, sid, 6, 10*time.Second)
	if got := userTexts(h); len(got) != 3 || got[2] != "queued at a" {
		t.Fatalf("user messages: %q", got)
	}
	if holder, _ := lease(t, db, sid); holder != "node-b" {
		t.Fatalf("lease held by %q: the post was not served by the new owner", holder)
	}
}

// An answer to the new owner's pending approval, queued at the paused
// ex-owner (which never saw the approval), reaches the approval: the turn
// and its message end.
func TestPausedOwnerForwardsAnAnswer(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	sid := exchangeOn(t, a.node)
	pauseOwner(t, db, a, b, sid, "scenario:approval")
	interaction := pending(t, b.node, sid)

	r := a.send("POST", "/v1/sessions/"+sid+"/interactions/"+interaction, `{"response":{"approved":true}}`, nil)
	if r.status != http.StatusOK {
		t.Fatalf("answer queued at the paused ex-owner: %d %s", r.status, r.body)
	}
	h := turnDone(t, b.node, sid, 4, 10*time.Second)
	if p := interactionPart(h[3], interaction); p == nil || p.Status != synccore.InteractionResolved {
		t.Fatalf("the approval after the answer: %+v", h[3])
	}
}

// leaseLapsed reports whether sid's lease expired by the database's clock.
func leaseLapsed(t *testing.T, db, sid string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var lapsed bool
	if err := conn.QueryRow(ctx, `SELECT lease_expires <= now() FROM sessions WHERE session_id = $1`, sid).Scan(&lapsed); err != nil {
		t.Fatal(err)
	}
	return lapsed
}

// failing fails a node's leased commits while on, as a database that
// went away for a moment would: the node keeps its lease (renewals are
// not failed), so no other node recovers its messages.
type failing struct {
	store.Store
	on     atomic.Bool
	failed atomic.Int64 // commits failed so far
}

func (f *failing) CommitLeased(ctx context.Context, l store.Lease, msgs []synccore.Message) error {
	if f.on.Load() {
		f.failed.Add(1)
		return errors.New("connection refused (test)")
	}
	return f.Store.CommitLeased(ctx, l, msgs)
}

// A turn whose commits failed (the database unreachable for a moment)
// does not leave its message streaming while its node keeps the lease:
// once the database answers again, the node closes it, done with the
// turn's error part.
func TestFailedClosingCommitIsClosedOnceTheStoreAnswers(t *testing.T) {
	db := pg.Database(t)
	f := &failing{}
	a := startNode(t, db, "node-a", ttl, func(c *server.Config) {
		c.Speed.Delta = 5 * time.Millisecond
		f.Store = c.Store
		c.Store = f
	})
	sid := a.createSession()
	if r := a.post(sid, "scenario:text chars=400 delta=2"); r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.body)
	}
	waitFor(t, 10*time.Second, "the agent message", func() bool { return len(a.history(sid)) == 2 })
	f.on.Store(true)
	// Every commit now fails: the step's commit ends the turn, then its
	// closing commit fails too.
	waitFor(t, 10*time.Second, "the turn's closing commit", func() bool { return f.failed.Load() >= 2 })
	f.on.Store(false)
	h := turnDone(t, a, sid, 2, 10*time.Second)
	last := h[1].Parts[len(h[1].Parts)-1]
	if last.Type != synccore.PartError {
		t.Fatalf("the message closed without an error part: %+v", h[1])
	}
	if holder, _ := lease(t, db, sid); holder != "node-a" {
		t.Fatalf("lease held by %q", holder)
	}
}

// The owner dies mid-stream and no client writes to the session: another
// node takes it over on its own once the lease lapsed (the orphan sweep),
// closes the message "interrupted" within the lease TTL plus a sweep, and
// the clients following on the other nodes converge.
func TestOrphanedMessageClosesWithoutARequest(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", ttl, paced)
	b := startNATSNode(t, db, ns, "node-b", ttl, paced)
	c := startNATSNode(t, db, ns, "node-c", ttl, paced)
	sid := a.createSession()
	mustStatus(t, "post on a", a.post(sid, "scenario:text chars=20000 delta=4"), http.StatusCreated)
	streaming(t, a, sid)
	crowd := newCrowd(t)
	for _, n := range []*node{b, c} {
		crowd.join(n, sid, 0)
	}
	a.kill()
	killed := time.Now()
	h := turnDone(t, b, sid, 2, 10*time.Second)
	took := time.Since(killed)
	t.Logf("the dead owner's message closed %s after the kill (TTL %s)", took, ttl)
	if last := h[1].Parts[len(h[1].Parts)-1]; last.Type != synccore.PartError || last.Code != session.CodeInterrupted {
		t.Fatalf("the dead owner's message: %+v", h[1])
	}
	if holder, _ := lease(t, db, sid); holder == "node-a" {
		t.Fatal("no node took the session over")
	}
	crowd.converge(b, sid, 20*time.Second)
}
