package session

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTurnDeltas is one turn of 10,000 one-rune deltas through the
// whole engine (model, projection, fan-out to one drained subscriber,
// SQLite checkpoints): deltas/s and commits per turn.
func BenchmarkTurnDeltas(b *testing.B) {
	const deltas = 10000
	e := newEnv(b, Config{QueueLimit: 1 << 16})
	sid := e.session("")
	sub, err := e.m.Subscribe(e.ctx, sid)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for {
			if _, err := sub.Next(context.Background()); err != nil {
				return
			}
		}
	}()
	commits := e.st.CommitCount()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		e.post(sid, fmt.Sprintf("scenario:long chars=%d delta=1", deltas))
		for e.m.running.Load() != 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(deltas*b.N)/elapsed.Seconds(), "deltas/s")
	b.ReportMetric(float64(e.st.CommitCount()-commits)/float64(b.N), "commits/turn")
}
