package model

import (
	"fmt"
	"net/http"
	"strings"
)

// ProviderOptions configure the real providers a -model flag names.
type ProviderOptions struct {
	OpenAIBaseURL     string      // "" = OpenAI's; any OpenAI-compatible server works
	OpenAIKey         string      // "" = $OPENAI_API_KEY
	AnthropicBaseURL  string      // "" = Anthropic's
	AnthropicKey      string      // "" = $ANTHROPIC_API_KEY
	AnthropicThinking int64       // extended-thinking budget in tokens, 0 = off
	Retry             RetryPolicy // zero = DefaultRetry
	// ContextBudget overrides every model's context budget (tokens); 0
	// keeps each provider's default.
	ContextBudget int
	HTTPClient    *http.Client // nil = http.DefaultClient
}

// Default context budgets, in estimated tokens: what the composer fits
// in a step's input before older turns give way to a summary.
const (
	DefaultOpenAIBudget    = 100_000
	DefaultAnthropicBudget = 150_000
	DefaultScriptedBudget  = 1_000_000
)

// Open makes the provider named by spec: "scripted", "openai:MODEL" or
// "anthropic:MODEL". Real providers are wrapped in Retrying.
func Open(spec string, o ProviderOptions) (Provider, error) {
	kind, name, _ := strings.Cut(spec, ":")
	if kind == DefaultName && name == "" {
		return Scripted{Budget: o.ContextBudget}, nil
	}
	if name == "" {
		return nil, fmt.Errorf("model %q: want PROVIDER:MODEL (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5) or %q", spec, DefaultName)
	}
	budget := func(def int) int {
		if o.ContextBudget > 0 {
			return o.ContextBudget
		}
		return def
	}
	var p Provider
	switch kind {
	case "openai":
		oa := NewOpenAI(name, o.OpenAIBaseURL, o.OpenAIKey, o.HTTPClient)
		oa.Budget = budget(DefaultOpenAIBudget)
		p = oa
	case "anthropic":
		an := NewAnthropic(name, o.AnthropicBaseURL, o.AnthropicKey, o.HTTPClient)
		an.Thinking = o.AnthropicThinking
		an.Budget = budget(DefaultAnthropicBudget)
		p = an
	default:
		return nil, fmt.Errorf("model %q: unknown provider %q (openai, anthropic)", spec, kind)
	}
	return Retrying{Provider: p, Policy: o.Retry}, nil
}

// Budgeter is a provider with a context budget (estimated tokens).
type Budgeter interface {
	// ContextBudget is the number of estimated tokens of context the
	// composer may send the model in one step.
	ContextBudget() int
}

// BudgetOf is p's context budget, looking through wrappers; a provider
// without one gets DefaultScriptedBudget.
func BudgetOf(p Provider) int {
	for {
		if b, ok := p.(Budgeter); ok && b.ContextBudget() > 0 {
			return b.ContextBudget()
		}
		u, ok := p.(interface{ Unwrap() Provider })
		if !ok {
			return DefaultScriptedBudget
		}
		p = u.Unwrap()
	}
}

// ContextBudget implements Budgeter.
func (p *OpenAI) ContextBudget() int { return p.Budget }

// ContextBudget implements Budgeter.
func (p *Anthropic) ContextBudget() int { return p.Budget }

// ContextBudget implements Budgeter.
func (s Scripted) ContextBudget() int { return s.Budget }
