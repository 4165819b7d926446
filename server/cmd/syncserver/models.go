package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// modelOptions are the flags that choose and configure models.
type modelOptions struct {
	specs     listFlag // -model, repeatable; the first is the default
	providers providerOptions
}

func (o *modelOptions) register(fs *flag.FlagSet) {
	fs.Var(&o.specs, "model", "model PROVIDER:MODEL (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5) or scripted; repeatable, the first is the default (none: scripted)")
	fs.StringVar(&o.providers.OpenAIBaseURL, "openai-base-url", os.Getenv("OPENAI_BASE_URL"), "base URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1 for Ollama (default $OPENAI_BASE_URL, else OpenAI's)")
	fs.StringVar(&o.providers.AnthropicBaseURL, "anthropic-base-url", os.Getenv("ANTHROPIC_BASE_URL"), "base URL of the Anthropic API (default $ANTHROPIC_BASE_URL, else Anthropic's)")
	fs.Int64Var(&o.providers.AnthropicThinking, "anthropic-thinking", 0, "Anthropic extended-thinking budget in tokens (0 = off; at least 1024 when on)")
	fs.IntVar(&o.providers.Retry.Attempts, "model-retries", model.DefaultRetry.Attempts, "tries of a model request that fails before its first token (429, 5xx, network)")
	fs.DurationVar(&o.providers.Retry.Base, "model-retry-wait", model.DefaultRetry.Base, "wait before the second try; doubles each try")
	fs.IntVar(&o.providers.ContextBudget, "context-budget", 0, "context budget of every model in estimated tokens (0 = each provider's default)")
}

// registry opens every -model; the scripted model is always there too (it
// needs no key). Keys come from OPENAI_API_KEY and ANTHROPIC_API_KEY.
func (o *modelOptions) registry() (model.Registry, string, error) {
	p := o.providers
	p.OpenAIKey = os.Getenv("OPENAI_API_KEY")
	p.AnthropicKey = os.Getenv("ANTHROPIC_API_KEY")
	p.Retry.Max = 8 * time.Second
	if p.Retry.Attempts < 1 {
		return nil, "", fmt.Errorf("-model-retries must be at least 1, got %d", p.Retry.Attempts)
	}
	reg := model.Registry{scripted.Name: scripted.Scripted{Budget: p.ContextBudget}}
	def := scripted.Name
	for i, spec := range o.specs {
		prov, err := openProvider(spec, p)
		if err != nil {
			return nil, "", err
		}
		if strings.HasPrefix(spec, "openai:") && p.OpenAIKey == "" && p.OpenAIBaseURL == "" {
			return nil, "", fmt.Errorf("-model %s needs OPENAI_API_KEY (or -openai-base-url for a local server)", spec)
		}
		if strings.HasPrefix(spec, "anthropic:") && p.AnthropicKey == "" {
			return nil, "", fmt.Errorf("-model %s needs ANTHROPIC_API_KEY", spec)
		}
		reg[spec] = prov
		if i == 0 {
			def = spec
		}
	}
	return reg, def, nil
}
