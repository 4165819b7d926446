package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/agentsync/agentsync/synccore"
)

// Writes that queue while the writer is busy commit as one group, and
// each is what it would have been alone: the valid ones land, each bad
// one (a sequence that skips, a done message changed) fails with its own
// error and writes nothing, and the session rows agree with what landed.
// Random mixes of both, many rounds.
func TestGroupCommitKeepsEachWriteAtomic(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	const writers = 12
	ids := make([]string, writers)
	next := make([]int64, writers) // the next sequence of each session
	for i := range ids {
		ids[i] = fmt.Sprintf("g%d", i)
		storetest.NewSession(t, s, ids[i])
		next[i] = 1
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		// Hold the writer so that every write below queues.
		w, err := s.writer.get(ctx, s.closed)
		if err != nil {
			t.Fatal(err)
		}
		bad := make([]bool, writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i, id := range ids {
			bad[i] = rng.IntN(3) == 0
			seq := next[i]
			if bad[i] {
				seq += 5 // a gap: refused
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Commit(ctx, id, []synccore.Message{storetest.UserMessage(id, seq, fmt.Sprintf("r%d", round))})
			}()
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			s.queue.mu.Lock()
			n := len(s.queue.pending)
			s.queue.mu.Unlock()
			if n == writers {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d writes queued, want %d", round, n, writers)
			}
			time.Sleep(time.Millisecond)
		}
		before := s.CommitCount()
		s.release(s.writer, w)
		wg.Wait()
		good := 0
		for i, id := range ids {
			switch {
			case bad[i] && errs[i] == nil:
				t.Fatalf("round %d: a write with a gap in %s was accepted", round, id)
			case !bad[i] && errs[i] != nil:
				t.Fatalf("round %d: a good write to %s failed with its group: %v", round, id, errs[i])
			case !bad[i]:
				next[i]++
				good++
			}
		}
		if got := s.CommitCount() - before; got != int64(good) {
			t.Fatalf("round %d: CommitCount grew by %d, want %d", round, got, good)
		}
	}
	for i, id := range ids {
		h, err := s.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(h)) != next[i]-1 {
			t.Fatalf("%s holds %d messages, want %d", id, len(h), next[i]-1)
		}
		sess, err := s.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sess.HeadSequence != next[i]-1 {
			t.Fatalf("%s: head_sequence %d, want %d", id, sess.HeadSequence, next[i]-1)
		}
	}
}
