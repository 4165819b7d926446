package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// leaseTTL is long enough that a lease never expires during a test unless
// the test waits for it.
const leaseTTL = time.Minute

func mustAcquire(t *testing.T, s store.Store, sessionID, node string, ttl time.Duration) store.Lease {
	t.Helper()
	l, err := s.AcquireLease(context.Background(), sessionID, node, ttl)
	if err != nil {
		t.Fatalf("AcquireLease(%s, %s): %v", sessionID, node, err)
	}
	return l
}

// wantLease fails unless err is the typed refusal sentinel is.
func wantLease(t *testing.T, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error = %v, want %v", err, sentinel)
	}
	WantCode(t, err, synccore.CodeConflict)
}

// A lease is one node's at a time; each acquisition bumps the epoch;
// release and renewal work only for the current holder.
func testLeaseAcquireRenewRelease(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	_, err := s.AcquireLease(ctx, "missing", "a", leaseTTL)
	WantCode(t, err, synccore.CodeNotFound)

	a := mustAcquire(t, s, "s", "a", leaseTTL)
	if a.Epoch != 1 || a.Node != "a" || a.SessionID != "s" || time.Until(a.Expires) < leaseTTL/2 {
		t.Fatalf("first lease = %+v", a)
	}
	_, err = s.AcquireLease(ctx, "s", "b", leaseTTL)
	wantLease(t, err, store.ErrLeaseHeld)

	renewed, err := s.RenewLease(ctx, a, 2*leaseTTL)
	if err != nil || renewed.Epoch != a.Epoch || !renewed.Expires.After(a.Expires) {
		t.Fatalf("renew: %+v, %v", renewed, err)
	}
	if err := s.ReleaseLease(ctx, renewed); err != nil {
		t.Fatal(err)
	}
	// A released lease is given up: it neither renews nor commits.
	_, err = s.RenewLease(ctx, renewed, leaseTTL)
	wantLease(t, err, store.ErrLeaseLost)
	wantLease(t, s.CommitLeased(ctx, renewed, []synccore.Message{UserMessage("s", 1, "released")}), store.ErrLeaseLost)
	b := mustAcquire(t, s, "s", "b", leaseTTL)
	if b.Epoch != 2 {
		t.Fatalf("after release, b's lease has epoch %d, want 2", b.Epoch)
	}
	_, err = s.RenewLease(ctx, a, leaseTTL)
	wantLease(t, err, store.ErrLeaseLost)
	// Releasing a lost lease is no error and leaves the holder's alone.
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Fatal(err)
	}
	_, err = s.AcquireLease(ctx, "s", "a", leaseTTL)
	wantLease(t, err, store.ErrLeaseHeld)
}

// Fencing: a node whose lease expired and was taken by another cannot
// commit, renew or recover, in the transaction that tries; nothing of its
// batch is written; the new holder commits.
func testLeaseFencesAStaleNode(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	a := mustAcquire(t, s, "s", "a", 50*time.Millisecond)
	streaming := AgentMessage("s", 2, TextPart(1, "streaming", "from a"))
	if err := s.CommitLeased(ctx, a, []synccore.Message{UserMessage("s", 1, "go"), streaming}); err != nil {
		t.Fatal(err)
	}

	// a stalls; b takes the lease once it expires (bounded wait).
	var b store.Lease
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if b, err = s.AcquireLease(ctx, "s", "b", leaseTTL); err == nil {
			break
		}
		if !errors.Is(err, store.ErrLeaseHeld) || time.Now().After(deadline) {
			t.Fatalf("b could not take the expired lease: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if b.Epoch != a.Epoch+1 {
		t.Fatalf("b's epoch %d, want %d", b.Epoch, a.Epoch+1)
	}

	// a wakes up and tries to go on: every write is refused.
	next := streaming
	next.Revision = 2
	next.Parts = []synccore.Part{TextPart(1, "streaming", "from a, stale")}
	wantLease(t, s.CommitLeased(ctx, a, []synccore.Message{next, UserMessage("s", 3, "stale")}), store.ErrLeaseLost)
	_, err := s.RenewLease(ctx, a, leaseTTL)
	wantLease(t, err, store.ErrLeaseLost)
	_, err = s.RecoverLeased(ctx, a, recoveryError)
	wantLease(t, err, store.ErrLeaseLost)
	// A leased session is written only under its lease.
	wantLease(t, s.Commit(ctx, "s", []synccore.Message{next}), store.ErrLeaseLost)

	got, err := s.Message(ctx, "s", "msg-2")
	if err != nil || got.Revision != 1 || got.Parts[0].Text != "from a" {
		t.Fatalf("a stale write landed: %+v, %v", got, err)
	}
	if p := page(t, s, "s", store.PageQuery{Limit: 10}); p.Total != 2 {
		t.Fatalf("a stale new message landed: total %d", p.Total)
	}

	// b recovers the turn a left open, then goes on.
	rec, err := s.RecoverLeased(ctx, b, recoveryError)
	if err != nil || len(rec) != 1 || rec[0].State != synccore.MessageDone || rec[0].Revision != 2 {
		t.Fatalf("b's recovery: %+v, %v", rec, err)
	}
	if err := s.CommitLeased(ctx, b, []synccore.Message{UserMessage("s", 3, "again")}); err != nil {
		t.Fatal(err)
	}
}

func recoveryError(synccore.Message) synccore.Part {
	return synccore.Part{Type: synccore.PartError, Code: "interrupted", Message: "the node serving this turn stopped"}
}

// RecoverStreaming (a starting node's sweep) leaves leased sessions to
// their holders: on several nodes it must not close another node's live
// turn.
func testRecoverStreamingSkipsLeasedSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "leased")
	NewSession(t, s, "free")
	l := mustAcquire(t, s, "leased", "a", leaseTTL)
	if err := s.CommitLeased(ctx, l, []synccore.Message{AgentMessage("leased", 1)}); err != nil {
		t.Fatal(err)
	}
	MustCommit(t, s, "free", AgentMessage("free", 1))
	rec, err := s.RecoverStreaming(ctx, recoveryError)
	if err != nil || len(rec) != 1 || rec[0].SessionID != "free" {
		t.Fatalf("recovered %+v, %v; want free's message only", rec, err)
	}
	if m, _ := s.Message(ctx, "leased", "msg-1"); m.State != synccore.MessageStreaming {
		t.Fatalf("the leased session's live message was closed: %+v", m)
	}
}

// Nodes racing for one lease: exactly one wins, the others see it held.
func testLeaseRaceHasOneWinner(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	const nodes = 8
	var wg sync.WaitGroup
	results := make(chan error, nodes)
	for i := range nodes {
		wg.Go(func() {
			_, err := s.AcquireLease(ctx, "s", fmt.Sprint("node-", i), leaseTTL)
			results <- err
		})
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrLeaseHeld):
			t.Fatalf("a losing node got %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d nodes won the lease, want 1", won)
	}
}

// Orphaned lists a session once its lease expired with a message left
// streaming, and only then: not while the lease holds, not once the
// message is closed, never a session that was never leased.
func testLeaseOrphanedSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "orphan")
	NewSession(t, s, "held")
	NewSession(t, s, "free")
	short := mustAcquire(t, s, "orphan", "a", 50*time.Millisecond)
	held := mustAcquire(t, s, "held", "a", leaseTTL)
	for _, c := range []struct {
		l  store.Lease
		id string
	}{{short, "orphan"}, {held, "held"}} {
		if err := s.CommitLeased(ctx, c.l, []synccore.Message{AgentMessage(c.id, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	MustCommit(t, s, "free", AgentMessage("free", 1))
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Orphaned(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 && got[0] == "orphan" {
			break
		}
		if len(got) > 1 || time.Now().After(deadline) {
			t.Fatalf("orphaned = %q, want [orphan]", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b := mustAcquire(t, s, "orphan", "b", leaseTTL)
	if _, err := s.RecoverLeased(ctx, b, recoveryError); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Orphaned(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("after recovery: orphaned = %q, %v", got, err)
	}
}
