package storetest

import (
	"context"
	"strings"
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
