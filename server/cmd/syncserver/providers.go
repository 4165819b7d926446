package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/anthropic"
	"github.com/agentsync/agentsync/server/model/openai"
	"github.com/agentsync/agentsync/server/model/scripted"
)

// providerOptions configure the real providers a -model flag names.
type providerOptions struct {
	OpenAIBaseURL     string            // "" = OpenAI's; any OpenAI-compatible server works
	OpenAIKey         string            // "" = $OPENAI_API_KEY
	AnthropicBaseURL  string            // "" = Anthropic's
	AnthropicKey      string            // "" = $ANTHROPIC_API_KEY
	AnthropicThinking int64             // extended-thinking budget in tokens, 0 = off
	Retry             model.RetryPolicy // zero = model.DefaultRetry
	// ContextBudget overrides every model's context budget (tokens); 0
	// keeps each provider's default.
	ContextBudget int
	HTTPClient    *http.Client // nil = http.DefaultClient
}

// openProvider makes the provider named by spec: "scripted",
// "openai:MODEL" or "anthropic:MODEL". Real providers are wrapped in
// model.Retrying.
func openProvider(spec string, o providerOptions) (model.Provider, error) {
	kind, name, _ := strings.Cut(spec, ":")
	if kind == scripted.Name && name == "" {
		return scripted.Scripted{Budget: o.ContextBudget}, nil
	}
	if name == "" {
		return nil, fmt.Errorf("model %q: want PROVIDER:MODEL (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5) or %q", spec, scripted.Name)
	}
	budget := func(def int) int {
		if o.ContextBudget > 0 {
			return o.ContextBudget
		}
		return def
	}
	var p model.Provider
	switch kind {
	case "openai":
		oa := openai.New(name, o.OpenAIBaseURL, o.OpenAIKey, o.HTTPClient)
		oa.Budget = budget(openai.DefaultBudget)
		p = oa
	case "anthropic":
		an := anthropic.New(name, o.AnthropicBaseURL, o.AnthropicKey, o.HTTPClient)
		an.Thinking = o.AnthropicThinking
		an.Budget = budget(anthropic.DefaultBudget)
		p = an
	default:
		return nil, fmt.Errorf("model %q: unknown provider %q (openai, anthropic)", spec, kind)
	}
	return model.Retrying{Provider: p, Policy: o.Retry}, nil
}
