package openai

import (
	"context"
	"net/http"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/internal/stream"
)

func BenchmarkOpenAIStream(b *testing.B) {
	hc := &http.Client{Transport: providertest.Memory{Body: providertest.OpenAIText(providertest.BenchTokens)}}
	p := New("gpt-4o-mini", "http://memory/v1", "k", hc)
	providertest.BenchStream(b, func(ctx context.Context, each func(oai.ChatCompletionChunk)) error {
		s := p.client.Chat.Completions.NewStreaming(ctx, oai.ChatCompletionNewParams{Model: "m", Messages: messages(providertest.BenchRequest.Messages)})
		defer s.Close()
		for s.Next() {
			each(s.Current())
		}
		return s.Err()
	}, func() func(*oai.ChatCompletionChunk) error {
		a := stream.NewAdapter(func(model.Event) error { return nil })
		return func(c *oai.ChatCompletionChunk) error { return chunk(a, c) }
	}, p)
}
