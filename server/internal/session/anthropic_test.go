package session

import (
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/anthropic"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// Extended thinking then a tool call, then the answer: the thinking is a
// reasoning part, and the next step sends it back as a thinking block with
// its signature, as Anthropic requires during a tool loop.
func TestAnthropicThinkingToolLoop(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	const fx = "../../model/testdata/anthropic/"
	srv.Queue(providertest.Reply{Fixture: fx + "thinking-tool.sse"}, providertest.Reply{Fixture: fx + "text.sse"})
	p := anthropic.New("claude-sonnet-4-5", srv.URL, "k", nil)
	p.Thinking = 1024
	const name = "anthropic:claude-sonnet-4-5"
	e := newEnv(t, Config{DefaultModel: name, Models: model.Registry{
		model.DefaultName: scripted.Scripted{},
		name:              model.Retrying{Provider: p, Policy: model.RetryPolicy{Attempts: 1, Base: time.Millisecond}},
	}})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "6*7?")
	d.converge()

	a := e.lastAgent(sid)
	if got := textOf(a, synccore.PartReasoning); got != "I should compute 6*7 with the calculator." {
		t.Fatalf("reasoning %q", got)
	}
	if tool := toolOf(t, a, "calculator"); tool.State != synccore.ToolOutputAvailable {
		t.Fatalf("tool %+v", tool)
	}
	if a.State != synccore.MessageDone || textOf(a, synccore.PartText) != "Hello there, friend." {
		t.Fatalf("answer %s %q", a.State, textOf(a, synccore.PartText))
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if th, _ := reqs[0].Body["thinking"].(map[string]any); th["type"] != "enabled" {
		t.Fatalf("thinking config %v", reqs[0].Body["thinking"])
	}
	msgs := reqs[1].Body["messages"].([]any)
	assistant := msgs[1].(map[string]any)["content"].([]any)
	first := assistant[0].(map[string]any)
	if first["type"] != "thinking" || first["signature"] != "EqQBCgIYAhIMsig42" ||
		!strings.Contains(first["thinking"].(string), "calculator") {
		t.Fatalf("the second request's assistant turn starts with %v", first)
	}
}
