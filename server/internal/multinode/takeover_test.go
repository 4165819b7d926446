package multinode

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// The lease TTL of these nodes: short, so takeovers are quick, and long
// enough that a loaded machine's scheduling does not expire a live node's
// lease.
const ttl = 600 * time.Millisecond

// A turn runs on node a. Node b refuses to serve the session (post,
// subscribe: 409 conflict naming a) while a lives. Then a stalls (it stops
// renewing, releases nothing, but its turn streams on): within the lease
// bound b takes the session over, closes a's open message with an
// "interrupted" error part, keeps every committed message and serves the
// next turn; a's late commit is refused by the database (fencing), a stops
// the turn and resyncs its subscribers; a client following on b converges
// on the server's digest.
func TestTakeoverFromAStalledNode(t *testing.T) {
	ctx := context.Background()
	db := pg.Database(t)
	// 2,000 runes at 2 per delta and 4 ms per delta: a turn of about 4 s,
	// which outlasts the takeover.
	paced := func(c *server.Config) { c.Speed = model.Speed{Delta: 4 * time.Millisecond} }
	a := startNode(t, db, "node-a", ttl, paced)
	b := startNode(t, db, "node-b", ttl, paced)

	sid := a.createSession()
	if r := a.post(sid, "scenario:text chars=2000 delta=2"); r.status != http.StatusCreated {
		t.Fatalf("post on a: %d %s", r.status, r.body)
	}
	watchA, r := a.subscribe(sid)
	if watchA == nil {
		t.Fatalf("subscribe on a: %d %s", r.status, r.body)
	}

	// b refuses while a lives, naming a.
	for _, r := range []answer{b.post(sid, "hello from b"), subscribeRefusal(t, b, sid)} {
		if r.status != http.StatusConflict || r.err.Code != synccore.CodeConflict || !strings.Contains(r.err.Message, `"node-a"`) {
			t.Fatalf("b served a live node's session: %d %+v", r.status, r.err)
		}
	}
	// Wait for a's agent message to exist: the message b must close.
	waitFor(t, 5*time.Second, "a's agent message", func() bool { return len(a.history(sid)) == 2 })

	a.store.stalled.Store(true)
	stalledAt := time.Now()
	took := postUntilServed(t, b, sid, "hello from b", stalledAt, ttl)
	t.Logf("b took the session %s after a stalled (TTL %s)", took, ttl)

	hist := b.history(sid)
	if len(hist) < 3 {
		t.Fatalf("after the takeover: %s", summary(hist))
	}
	if u := hist[0]; u.Role != synccore.RoleUser || u.Parts[0].Text != "scenario:text chars=2000 delta=2" {
		t.Fatalf("the committed user message changed: %+v", u)
	}
	open := hist[1]
	last := open.Parts[len(open.Parts)-1]
	if open.Role != synccore.RoleAgent || open.State != synccore.MessageDone || last.Type != synccore.PartError || last.Code != session.CodeInterrupted {
		t.Fatalf("a's open message after the takeover: %+v", open)
	}
	if u := hist[2]; u.Role != synccore.RoleUser || u.Parts[0].Text != "hello from b" {
		t.Fatalf("b's message: %+v", u)
	}

	// a streams on until its next commit, which the database refuses:
	// a's subscriber is then told to re-read the snapshot.
	if !resyncedFor(t, watchA, fanout.ResyncOwnerChanged, 10*time.Second) {
		t.Fatal("a's subscriber was not resynced after a lost the session")
	}
	if got := b.history(sid)[1]; got.Revision != open.Revision || got.Parts[len(got.Parts)-1].Code != session.CodeInterrupted {
		t.Fatalf("a's fenced commit landed: %+v", got)
	}

	// b's turn ends; a client following on b holds exactly the snapshot.
	waitFor(t, 10*time.Second, "b's turn over", func() bool {
		h := b.history(sid)
		return len(h) == 4 && h[3].State == synccore.MessageDone
	})
	want, err := b.srv.Digest(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	follow(b, sid).converge(want, 10*time.Second)
	if fromA, err := a.srv.Digest(ctx, sid); err != nil || fromA != want {
		t.Fatalf("a reads another snapshot: %s, %v (b: %s)", fromA, err, want)
	}
	// a, stalled, still cannot serve the session: b holds it.
	if r := a.post(sid, "a is back"); r.status != http.StatusConflict || !strings.Contains(r.err.Message, `"node-b"`) {
		t.Fatalf("a served b's session: %d %s", r.status, r.body)
	}
}

// A node that shuts down gracefully releases its sessions: another node
// serves them at once, well inside the lease TTL.
func TestGracefulCloseHandsOver(t *testing.T) {
	db := pg.Database(t)
	a := startNode(t, db, "node-a", time.Minute, nil)
	b := startNode(t, db, "node-b", time.Minute, nil)
	sid := exchangeOn(t, a)
	if r := b.post(sid, "hello"); r.status != http.StatusConflict {
		t.Fatalf("b served a live node's session: %d %s", r.status, r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	answeredOn(t, b, sid)
}

// A session that leaves a node's memory (idle past Limits.IdleTimeout)
// leaves its lease too: another node serves it at once, and the first
// node takes it back later, at a new epoch.
func TestEvictedSessionIsReleased(t *testing.T) {
	db := pg.Database(t)
	idle := func(c *server.Config) { c.Limits.IdleTimeout = 200 * time.Millisecond }
	a := startNode(t, db, "node-a", time.Minute, idle)
	b := startNode(t, db, "node-b", time.Minute, idle)
	sid := exchangeOn(t, a)
	waitFor(t, 10*time.Second, "b serving the session a unloaded", func() bool {
		return b.post(sid, "hello from b").status == http.StatusCreated
	})
	waitFor(t, 10*time.Second, "a serving it again once b unloaded it", func() bool {
		h := a.history(sid)
		return h[len(h)-1].State == synccore.MessageDone && a.post(sid, "a again").status == http.StatusCreated
	})
	waitFor(t, 10*time.Second, "a's answer", func() bool {
		h := a.history(sid)
		return len(h) == 6 && h[5].State == synccore.MessageDone && h[5].Parts[len(h[5].Parts)-1].Type != synccore.PartError
	})
}

// exchangeOn creates a session on n and runs one short turn there.
func exchangeOn(t *testing.T, n *node) string {
	t.Helper()
	sid := n.createSession()
	answeredOn(t, n, sid)
	return sid
}

// answeredOn posts on n and waits for the answer, which must end well.
func answeredOn(t *testing.T, n *node, sid string) {
	t.Helper()
	before := len(n.history(sid))
	if r := n.post(sid, "hello"); r.status != http.StatusCreated {
		t.Fatalf("post on %s: %d %s", n.name, r.status, r.body)
	}
	waitFor(t, 5*time.Second, "the turn on "+n.name, func() bool {
		h := n.history(sid)
		return len(h) == before+2 && h[len(h)-1].State == synccore.MessageDone &&
			h[len(h)-1].Parts[len(h[len(h)-1].Parts)-1].Type != synccore.PartError
	})
}

func subscribeRefusal(t *testing.T, n *node, sid string) answer {
	t.Helper()
	c, r := n.subscribe(sid)
	if c != nil {
		t.Fatalf("node %s opened a subscription to a session it does not serve", n.name)
	}
	return r
}

// resyncedFor reads c's frames until a resync frame with code, false if
// none comes within d.
func resyncedFor(t *testing.T, c interface {
	SetReadDeadline(time.Time) error
	ReadMessage() (int, []byte, error)
}, code string, d time.Duration) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			return false
		}
		frames, err := wire.DecodeFrames(data)
		if err != nil {
			t.Fatalf("bad frames: %v", err)
		}
		for _, f := range frames {
			if f.Kind == synccore.FrameResync {
				return f.Code == code
			}
		}
	}
}

func waitFor(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func summary(msgs []synccore.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(string(m.Role) + "/" + string(m.State) + " ")
	}
	return b.String()
}
