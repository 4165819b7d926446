package main

import (
	"testing"

	"github.com/agentsync/agentsync/server/model"
)

func TestOpenProviderSpecs(t *testing.T) {
	for _, spec := range []string{"scripted", "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"} {
		if _, err := openProvider(spec, providerOptions{}); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
	for _, spec := range []string{"openai", "openai:", "gemini:x", ""} {
		if _, err := openProvider(spec, providerOptions{}); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
	p, _ := openProvider("openai:x", providerOptions{ContextBudget: 1234})
	if model.BudgetOf(p) != 1234 {
		t.Errorf("budget %d", model.BudgetOf(p))
	}
}
