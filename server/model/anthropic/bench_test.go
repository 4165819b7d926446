package anthropic

import (
	"context"
	"net/http"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/internal/stream"
)

func BenchmarkAnthropicStream(b *testing.B) {
	hc := &http.Client{Transport: providertest.Memory{Body: providertest.AnthropicText(providertest.BenchTokens)}}
	p := New("claude-sonnet-4-5", "http://memory", "k", hc)
	providertest.BenchStream(b, func(ctx context.Context, each func(sdk.MessageStreamEventUnion)) error {
		_, msgs := p.messages(providertest.BenchRequest.Messages)
		s := p.client.Messages.NewStreaming(ctx, sdk.MessageNewParams{Model: "m", MaxTokens: 1024, Messages: msgs})
		defer s.Close()
		for s.Next() {
			each(s.Current())
		}
		return s.Err()
	}, func() func(*sdk.MessageStreamEventUnion) error {
		return (&stepStream{p: p, a: stream.NewAdapter(func(model.Event) error { return nil })}).event
	}, p)
}
