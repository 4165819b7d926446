package providertest

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/server/model"
)

// BenchTokens is the number of text deltas BenchStream's stream holds.
const BenchTokens = 5000

// BenchRequest is the request BenchStream's provider streams.
var BenchRequest = model.Request{Model: "m", Messages: []model.InputMessage{{Role: model.RoleUser, Content: []model.InputContent{{Type: model.ContentText, Text: "go"}}}}}

// BenchStream reports, per streamed token, from the same SSE bytes held in
// memory: "sdk", the SDK's own parse (iterating its stream, nothing else);
// "adapter", our mapping of the parsed chunks to engine events, replayed
// from chunks parsed once (the cost this package adds); "provider", the
// whole Stream, bytes to emitted events.
func BenchStream[T any](b *testing.B, parse func(context.Context, func(T)) error, replay func() func(*T) error, p model.Provider) {
	ctx := context.Background()
	per := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*BenchTokens), "ns/token")
	}
	b.Run("sdk", func(b *testing.B) {
		for b.Loop() {
			if err := parse(ctx, func(T) {}); err != nil {
				b.Fatal(err)
			}
		}
		per(b)
	})
	var chunks []T
	if err := parse(ctx, func(c T) { chunks = append(chunks, c) }); err != nil {
		b.Fatal(err)
	}
	b.Run("adapter", func(b *testing.B) {
		for b.Loop() {
			adapt := replay()
			for i := range chunks {
				if err := adapt(&chunks[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		per(b)
	})
	b.Run("provider", func(b *testing.B) {
		for b.Loop() {
			deltas := 0
			if err := p.Stream(ctx, BenchRequest, func(ev model.Event) error {
				if ev.Type == model.EvTextDelta {
					deltas++
				}
				return nil
			}); err != nil || deltas != BenchTokens {
				b.Fatalf("%d deltas, err %v", deltas, err)
			}
		}
		per(b)
	})
}
