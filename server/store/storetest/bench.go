package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// BenchCommitCheckpoint measures one checkpoint transaction on s, as the
// session engine commits them: a new revision of a streaming agent message
// with one part upserted, the session touched. It reports commits/s.
func BenchCommitCheckpoint(b *testing.B, s store.Store) {
	ctx := context.Background()
	NewSession(b, s, "bench")
	m := AgentMessage("bench", 1, TextPart(1, "streaming", "x"))
	MustCommit(b, s, "bench", m)
	text := strings.Repeat("token ", 50)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		m.Revision++
		// Alternate between rewriting the open part and appending a new one,
		// as a tool loop does.
		seq := int64(i/2 + 1)
		m.Parts = []synccore.Part{TextPart(seq, "streaming", text)}
		if err := s.Commit(ctx, "bench", []synccore.Message{m}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
}

// BenchCommitConcurrent measures checkpoint commits of sessions streaming
// at once, as a server with many running turns makes them: sessions
// goroutines, each committing new revisions of its own session's agent
// message. It reports commits/s over all of them.
func BenchCommitConcurrent(b *testing.B, s store.Store, sessions int) {
	ctx := context.Background()
	msgs := make([]synccore.Message, sessions)
	for i := range msgs {
		id := fmt.Sprintf("bench-%d", i)
		NewSession(b, s, id)
		msgs[i] = AgentMessage(id, 1, TextPart(1, "streaming", "x"))
		MustCommit(b, s, id, msgs[i])
	}
	text := strings.Repeat("token ", 50)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := msgs[i]
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				m.Revision++
				m.Parts = []synccore.Part{TextPart(m.Revision/2+1, "streaming", text)}
				if err := s.Commit(ctx, m.SessionID, []synccore.Message{m}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
