package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
)

// BenchmarkFork makes forks of a session at its head: of the
// 100,000-message fixture and of a 10-message session in the same file. A
// fork is one row whatever its prefix (target: the 100,000 one within
// 1.5x of the 10 one).
func BenchmarkFork(b *testing.B) {
	s := openFixture(b)
	ctx := context.Background()
	small := fmt.Sprintf("small-%d", time.Now().UnixNano())
	storetest.NewSession(b, s, small)
	for seq := int64(1); seq <= 10; seq++ {
		storetest.MustCommit(b, s, small, storetest.UserMessage(small, seq, "q"))
	}
	for _, c := range []struct {
		name, parent string
		head         int64
	}{{"10", small, 10}, {"100000", fixtureSession, fixtureMessages}} {
		b.Run(c.name, func(b *testing.B) {
			run := time.Now().UnixNano()
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				_, err := s.ForkSession(ctx, c.parent, c.head+1, store.Session{SessionID: fmt.Sprintf("f-%d-%s-%d", run, c.name, i), Model: "scripted"})
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportLatency(b, lat, nil)
		})
	}
}

// BenchmarkMessagesPage50DeepPath reads pages of 50 along a path 32 forks
// deep below the 100,000-message fixture (each fork forked from the one
// before, 3 messages of its own, the root's history behind them): the
// page targets of MessagesPage50 hold on a deep path too.
func BenchmarkMessagesPage50DeepPath(b *testing.B) {
	s := openFixture(b)
	ctx := context.Background()
	parent, head := fixtureSession, int64(fixtureMessages)
	run := time.Now().UnixNano()
	for d := range 32 {
		id := fmt.Sprintf("deep-%d-%d", run, d)
		// Fork a little below the head: each level hides its parent's last
		// messages, as an edit does.
		before := head - 1
		if _, err := s.ForkSession(ctx, parent, before, store.Session{SessionID: id, Model: "scripted"}); err != nil {
			b.Fatal(err)
		}
		head = before - 1
		for range 3 {
			head++
			storetest.MustCommit(b, s, id, storetest.UserMessage(id, head, "deeper"))
		}
		parent = id
	}
	rng := rand.New(rand.NewPCG(3, 4))
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// Half at the head (every segment of the path in one page), half
		// spread over the shared history.
		q := store.PageQuery{Limit: 50}
		if rng.IntN(2) == 0 {
			q.BeforeSequence = beforeFor(rng)
		}
		t0, c0 := time.Now(), threadCPU()
		p, err := s.Messages(ctx, parent, q)
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, threadCPU()-c0)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Items) != 50 {
			b.Fatalf("page of %d items", len(p.Items))
		}
	}
	b.StopTimer()
	reportLatency(b, lat, cpu)
}
