package model

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/agentsync/agentsync/server/model/providertest"
)

const benchTokens = 5000

// OpenAISSE is a Chat Completions stream of n one-word content deltas.
func OpenAISSE(n int) []byte {
	var b strings.Builder
	const head = `data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini","system_fingerprint":"fp_b","choices":[{"index":0,"delta":{"content":"`
	for i := range n {
		fmt.Fprintf(&b, "%stok%d \"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i%10)
	}
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-B","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":` + fmt.Sprint(n) + `,"total_tokens":` + fmt.Sprint(n+9) + "}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// AnthropicSSE is a Messages stream of n one-word text deltas.
func AnthropicSSE(n int) []byte {
	var b strings.Builder
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_B","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range n {
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok%d "}}`, i%10))
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":%d}}`, n))
	ev("message_stop", `{"type":"message_stop"}`)
	return []byte(b.String())
}

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
	hc := &http.Client{Transport: providertest.Memory{Body: OpenAISSE(benchTokens)}}
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
	hc := &http.Client{Transport: providertest.Memory{Body: AnthropicSSE(benchTokens)}}
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
