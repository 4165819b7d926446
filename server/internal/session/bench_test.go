package session

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/openai"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
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

// BenchmarkProviderTurnDeltas is BenchmarkTurnDeltas with the OpenAI
// provider reading a recorded stream of 10,000 content chunks from memory:
// provider SSE bytes to published delta frames, through the SDK's parse,
// the adapter and the engine.
func BenchmarkProviderTurnDeltas(b *testing.B) {
	const deltas = 10000
	hc := &http.Client{Transport: providertest.Memory{Body: providertest.OpenAIText(deltas)}}
	// Every delta its own frame: the reader counts frames.
	e := newEnv(b, Config{QueueLimit: 1 << 16, FoldBytes: -1, DefaultModel: openAIModel, Models: model.Registry{
		model.DefaultName: scripted.Scripted{},
		openAIModel:       openai.New("gpt-4o-mini", "http://memory/v1", "k", hc),
	}})
	sid := e.session("")
	sub, err := e.m.Subscribe(e.ctx, sid)
	if err != nil {
		b.Fatal(err)
	}
	published := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			frames, err := sub.Next(context.Background())
			if err != nil {
				return
			}
			for _, f := range frames {
				if f.Kind == synccore.FrameDelta {
					published++
				}
			}
		}
	}()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		e.post(sid, "go")
		for e.m.running.Load() != 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	sub.Close()
	<-done
	if published != deltas*b.N {
		b.Fatalf("%d delta frames published, want %d", published, deltas*b.N)
	}
	b.ReportMetric(float64(deltas*b.N)/elapsed.Seconds(), "deltas/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(deltas*b.N), "ns/token")
}
