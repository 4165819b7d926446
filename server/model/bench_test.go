package model

import (
	"context"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/agentsync/agentsync/server/internal/providertest"
)

const benchTokens = 5000

var benchReq = Request{Model: "m", Messages: []InputMessage{{Role: RoleUser, Content: []InputContent{{Type: ContentText, Text: "go"}}}}}

// benchStream reports, per streamed token, from the same SSE bytes held in
// memory: "sdk", the SDK's own parse (iterating its stream, nothing else);
// "adapter", our mapping of the parsed chunks to engine events, replayed
// from chunks parsed once (the cost this package adds); "provider", the
// whole Stream, bytes to emitted events.
func benchStream[T any](b *testing.B, parse func(context.Context, func(T)) error, replay func() func(*T) error, p Provider) {
	ctx := context.Background()
	per := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTokens), "ns/token")
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
			if err := p.Stream(ctx, benchReq, func(ev Event) error {
				if ev.Type == EvTextDelta {
					deltas++
				}
				return nil
			}); err != nil || deltas != benchTokens {
				b.Fatalf("%d deltas, err %v", deltas, err)
			}
		}
		per(b)
	})
}

func BenchmarkOpenAIStream(b *testing.B) {
	hc := &http.Client{Transport: providertest.Memory{Body: providertest.OpenAIText(benchTokens)}}
	p := NewOpenAI("gpt-4o-mini", "http://memory/v1", "k", hc)
	benchStream(b, func(ctx context.Context, each func(openai.ChatCompletionChunk)) error {
		s := p.client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: openAIMessages(benchReq.Messages)})
		defer s.Close()
		for s.Next() {
			each(s.Current())
		}
		return s.Err()
	}, func() func(*openai.ChatCompletionChunk) error {
		return newAdapter(func(Event) error { return nil }).openAIChunk
	}, p)
}

func BenchmarkAnthropicStream(b *testing.B) {
	hc := &http.Client{Transport: providertest.Memory{Body: providertest.AnthropicText(benchTokens)}}
	p := NewAnthropic("claude-sonnet-4-5", "http://memory", "k", hc)
	benchStream(b, func(ctx context.Context, each func(anthropic.MessageStreamEventUnion)) error {
		_, msgs := p.messages(benchReq.Messages)
		s := p.client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "m", MaxTokens: 1024, Messages: msgs})
		defer s.Close()
		for s.Next() {
			each(s.Current())
		}
		return s.Err()
	}, func() func(*anthropic.MessageStreamEventUnion) error {
		return (&anthropicStream{p: p, a: newAdapter(func(Event) error { return nil })}).event
	}, p)
}
