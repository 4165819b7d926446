package cluster

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/pgtest"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/agentsync/agentsync/synccore"
)

var cluster *pgtest.Cluster

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &cluster)) }

// ttl is short so that takeovers are quick; a test that needs a lease to
// survive a loaded machine's scheduling delays uses longTTL.
const (
	ttl     = 300 * time.Millisecond
	longTTL = time.Second
)

// node is one server node: its own connection pool to the shared
// database and its own keeper.
func node(t *testing.T, url, name string) (*postgres.Store, *Keeper) {
	return nodeTTL(t, url, name, ttl)
}

func nodeTTL(t *testing.T, url, name string, ttl time.Duration) (*postgres.Store, *Keeper) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := postgres.Open(context.Background(), url, postgres.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	k := New(Config{Store: st, Node: name, TTL: ttl, Logger: log})
	t.Cleanup(func() {
		k.Close(context.Background())
		st.Close()
	})
	return st, k
}

func interrupted(synccore.Message) synccore.Part {
	return synccore.Part{Type: synccore.PartError, Code: "interrupted", Message: "the node serving this turn stopped"}
}

// takeOver polls Own until the lease is free, failing past bound.
func takeOver(t *testing.T, k *Keeper, sessionID string, bound time.Duration) (*Ownership, []synccore.Message) {
	t.Helper()
	start := time.Now()
	for {
		o, rec, err := k.Own(context.Background(), sessionID, interrupted)
		if err == nil {
			return o, rec
		}
		if !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("Own: %v", err)
		}
		if time.Since(start) > bound {
			t.Fatalf("no takeover within %s: %v", bound, err)
		}
		time.Sleep(ttl / 20)
	}
}

// A live owner keeps its session across many TTLs: renewal works, and the
// other node cannot take it.
func TestOwnerKeepsItsSessionWhileAlive(t *testing.T) {
	url := cluster.Database(t)
	stA, a := nodeTTL(t, url, "a", longTTL)
	_, b := nodeTTL(t, url, "b", longTTL)
	storetest.NewSession(t, stA, "s")
	o, _, err := a.Own(context.Background(), "s", interrupted)
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		time.Sleep(longTTL / 2)
		if _, _, err := b.Own(context.Background(), "s", interrupted); !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("b took a live owner's session: %v", err)
		}
	}
	if o.Lost() {
		t.Fatal("a lost its session while renewing")
	}
	if err := o.Commit(context.Background(), []synccore.Message{storetest.UserMessage("s", 1, "still mine")}); err != nil {
		t.Fatal(err)
	}
	// A graceful release hands the session over at once.
	if err := o.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	// (Within a fraction of the TTL: the lease was released, not expired.)
	takeOver(t, b, "s", longTTL/2)
}

// A node that stops renewing (paused, or killed without a word) loses its
// session to another node within the lease bound; the new owner closes the
// message it left streaming with an error part, nothing committed is lost,
// and the paused node, woken up, cannot commit and learns it lost.
func TestPausedOwnerIsTakenOverAndFenced(t *testing.T) {
	ctx := context.Background()
	url := cluster.Database(t)
	stA, a := node(t, url, "a")
	stB, b := node(t, url, "b")
	storetest.NewSession(t, stA, "s")
	oa, _, err := a.Own(ctx, "s", interrupted)
	if err != nil {
		t.Fatal(err)
	}
	streaming := storetest.AgentMessage("s", 2, storetest.TextPart(1, "streaming", "half an answer"))
	if err := oa.Commit(ctx, []synccore.Message{storetest.UserMessage("s", 1, "go"), streaming}); err != nil {
		t.Fatal(err)
	}

	oa.stopRenewing() // a is paused: no renewal, no release
	// The bound: the TTL after a's last renewal, with room for a loaded
	// machine's scheduling.
	ob, rec := takeOver(t, b, "s", 5*ttl)
	if len(rec) != 1 || rec[0].State != synccore.MessageDone || rec[0].Parts[len(rec[0].Parts)-1].Code != "interrupted" {
		t.Fatalf("b's recovery: %+v", rec)
	}
	got, err := stB.Message(ctx, "s", "msg-2")
	if err != nil || got.Parts[0].Text != "half an answer" || got.State != synccore.MessageDone {
		t.Fatalf("after takeover: %+v, %v", got, err)
	}

	// a wakes up and tries to go on.
	next := streaming
	next.Revision = 2
	next.Parts = []synccore.Part{storetest.TextPart(1, "streaming", "half an answer, and more")}
	if err := oa.Commit(ctx, []synccore.Message{next}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the paused node's commit: %v, want fenced", err)
	}
	select {
	case <-oa.LostC():
	default:
		t.Fatal("the fenced node was not told it lost the session")
	}
	if got, _ := stB.Message(ctx, "s", "msg-2"); got.Revision != rec[0].Revision {
		t.Fatalf("the fenced write landed: %+v", got)
	}
	if err := ob.Commit(ctx, []synccore.Message{storetest.UserMessage("s", 3, "go on")}); err != nil {
		t.Fatalf("the new owner's commit: %v", err)
	}
}

// A renewal refused because another node took the lease marks the
// ownership lost without a commit: the owner stops serving at once.
func TestRenewalNoticesTheLoss(t *testing.T) {
	ctx := context.Background()
	url := cluster.Database(t)
	stA, a := node(t, url, "a")
	storetest.NewSession(t, stA, "s")
	oa, _, err := a.Own(ctx, "s", interrupted)
	if err != nil {
		t.Fatal(err)
	}
	// Another node steals it outright (as after an expiry a pause hid).
	if err := stA.ReleaseLease(ctx, oa.Lease()); err != nil {
		t.Fatal(err)
	}
	stC, _ := node(t, url, "c")
	if _, err := stC.AcquireLease(ctx, "s", "c", time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-oa.LostC():
	case <-time.After(10 * ttl):
		t.Fatal("the renewal loop did not notice the loss")
	}
}
