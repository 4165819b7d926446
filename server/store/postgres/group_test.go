package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/agentsync/agentsync/synccore"
)

// holdRunners takes every runner of s's commit queue, so that commits
// queue; the function returned gives them back and starts the groups.
func holdRunners(s *Store) func() {
	q := &s.queue
	q.mu.Lock()
	q.running += groupRunners
	q.mu.Unlock()
	return func() {
		q.mu.Lock()
		q.running -= groupRunners
		leaders := q.dispatchLocked()
		q.mu.Unlock()
		wakeAll(leaders)
	}
}

// waitPending waits until n commits queue.
func waitPending(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.queue.mu.Lock()
		got := len(s.queue.pending)
		s.queue.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d commits queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// refuseBoom makes the database itself refuse a part whose body holds
// "boom" (a trigger raising check_violation, as the schema's rules do):
// a commit the checks in Go pass and the database refuses.
func refuseBoom(t *testing.T, s *Store) {
	t.Helper()
	_, err := s.pool.Exec(context.Background(), `
		CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF position('boom'::bytea IN NEW.body) > 0 THEN
				RAISE EXCEPTION 'boom refused' USING ERRCODE = 'check_violation';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse_boom BEFORE INSERT OR UPDATE ON parts
			FOR EACH ROW EXECUTE FUNCTION refuse_boom();`)
	if err != nil {
		t.Fatal(err)
	}
}

// Commits that queue while the runners are busy commit as one group, and
// each is what it would have been alone: the valid ones land, each bad
// one fails with its own error and writes nothing: refused by the checks
// (a sequence that skips, a lease taken since), or by the database (a
// trigger's rule, which loses the group's transaction: the others run
// again). Every session is leased at an epoch of its own, so a commit
// written at another's epoch would be fenced. Random mixes, many rounds.
func TestGroupCommitKeepsEachWriteAtomic(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	refuseBoom(t, s)
	ctx := context.Background()
	const writers = 12
	ids := make([]string, writers)
	leases := make([]store.Lease, writers)
	stale := make([]store.Lease, writers)
	msgs := make([]synccore.Message, writers)
	texts := make([]string, writers) // the last text committed
	for i := range ids {
		ids[i] = fmt.Sprintf("g%d", i)
		storetest.NewSession(t, s, ids[i])
		for range i%3 + 2 {
			l, err := s.AcquireLease(ctx, ids[i], "node-a", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			stale[i], leases[i] = leases[i], l
		}
		msgs[i] = storetest.AgentMessage(ids[i], 1, storetest.TextPart(1, "streaming", "start"))
		if err := s.CommitLeased(ctx, leases[i], []synccore.Message{msgs[i]}); err != nil {
			t.Fatal(err)
		}
		texts[i] = "start"
	}
	rng := rand.New(rand.NewPCG(3, 4))
	groupsBefore := s.groupRuns.Load()
	for round := range 20 {
		release := holdRunners(s)
		kind := make([]int, writers) // 0 good, 1 gap, 2 stale lease, 3 refused by the database
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i, id := range ids {
			kind[i] = 0
			if rng.IntN(3) == 0 {
				kind[i] = 1 + rng.IntN(3)
			}
			m := msgs[i]
			m.Revision++
			text := fmt.Sprintf("r%d", round)
			l := leases[i]
			switch kind[i] {
			case 1:
				m = storetest.UserMessage(id, 5, "gap") // the next is 2
			case 2:
				l = stale[i]
			case 3:
				text = "boom"
			}
			m.Parts = []synccore.Part{storetest.TextPart(1, "streaming", text)}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.CommitLeased(ctx, l, []synccore.Message{m})
			}()
		}
		waitPending(t, s, writers)
		before := s.CommitCount()
		release()
		wg.Wait()
		good := 0
		for i, id := range ids {
			switch {
			case kind[i] != 0 && errs[i] == nil:
				t.Fatalf("round %d: bad write (kind %d) to %s was accepted", round, kind[i], id)
			case kind[i] == 2 && !errors.Is(errs[i], store.ErrLeaseLost):
				t.Fatalf("round %d: a write under a stale lease to %s: %v, want lease lost", round, id, errs[i])
			case kind[i] != 0:
				storetest.WantCode(t, errs[i], synccore.CodeConflict)
			case errs[i] != nil:
				t.Fatalf("round %d: a good write to %s failed with its group: %v", round, id, errs[i])
			default:
				msgs[i].Revision++
				texts[i] = fmt.Sprintf("r%d", round)
				good++
			}
		}
		if got := s.CommitCount() - before; got != int64(good) {
			t.Fatalf("round %d: CommitCount grew by %d, want %d", round, got, good)
		}
	}
	if s.groupRuns.Load() == groupsBefore {
		t.Fatal("no group commit ran")
	}
	for i, id := range ids {
		h, err := s.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || h[0].Revision != msgs[i].Revision || len(h[0].Parts) != 1 || h[0].Parts[0].Text != texts[i] {
			t.Fatalf("%s holds %+v, want revision %d with text %q", id, h, msgs[i].Revision, texts[i])
		}
		sess, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sess.HeadSequence != 1 {
			t.Fatalf("%s: head_sequence %d, want 1", id, sess.HeadSequence)
		}
	}
}

// The commits of one session keep their arrival order, however they are
// grouped: several commits of each session queue, one after the other,
// each the next revision of its session's message (a commit applied out
// of order would be refused), interleaved with the other sessions'; all
// land, and each session ends at its last.
func TestGroupCommitKeepsOrderPerSession(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	ctx := context.Background()
	const sessions, perSession = 4, 5
	msgs := make([]synccore.Message, sessions)
	for i := range msgs {
		id := fmt.Sprintf("o%d", i)
		storetest.NewSession(t, s, id)
		msgs[i] = storetest.AgentMessage(id, 1, storetest.TextPart(1, "streaming", "x"))
		storetest.MustCommit(t, s, id, msgs[i])
	}
	release := holdRunners(s)
	errs := make(chan error, sessions*perSession)
	var wg sync.WaitGroup
	queued := 0
	for n := range perSession {
		for i := range msgs {
			m := msgs[i]
			m.Revision += int64(n + 1)
			m.Parts = []synccore.Part{storetest.TextPart(1, "streaming", fmt.Sprintf("rev %d", m.Revision))}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Commit(ctx, m.SessionID, []synccore.Message{m}); err != nil {
					errs <- fmt.Errorf("%s revision %d: %w", m.SessionID, m.Revision, err)
				}
			}()
			queued++
			waitPending(t, s, queued) // the next arrives after this one
		}
	}
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range msgs {
		h, err := s.History(ctx, msgs[i].SessionID)
		if err != nil {
			t.Fatal(err)
		}
		want := msgs[i].Revision + perSession
		if len(h) != 1 || h[0].Revision != want || h[0].Parts[0].Text != fmt.Sprintf("rev %d", want) {
			t.Fatalf("%s holds %+v, want revision %d", msgs[i].SessionID, h, want)
		}
	}
}

// A commit whose context ends while it waits for a group is not run,
// and the others of its group commit.
func TestGroupCommitSkipsCancelled(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	storetest.NewSession(t, s, "a")
	storetest.NewSession(t, s, "b")
	release := holdRunners(s)
	ctx, cancel := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() { errA <- s.Commit(ctx, "a", []synccore.Message{storetest.UserMessage("a", 1, "hi")}) }()
	waitPending(t, s, 1)
	errB := make(chan error, 1)
	go func() {
		errB <- s.Commit(context.Background(), "b", []synccore.Message{storetest.UserMessage("b", 1, "hi")})
	}()
	waitPending(t, s, 2)
	cancel()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled commit: %v, want context.Canceled", err)
	}
	release()
	if err := <-errB; err != nil {
		t.Fatalf("commit b: %v", err)
	}
	for id, want := range map[string]int{"a": 0, "b": 1} {
		h, err := s.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != want {
			t.Fatalf("%s holds %d messages, want %d", id, len(h), want)
		}
	}
}
