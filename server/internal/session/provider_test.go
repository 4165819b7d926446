package session

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/openai"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

const openAIModel = "openai:gpt-4o-mini"

// providerEnv is a Manager whose default model is the OpenAI provider
// talking to a fake OpenAI server on loopback.
func providerEnv(t *testing.T) (*env, *providertest.Server) {
	t.Helper()
	srv := providertest.New()
	t.Cleanup(srv.Close)
	p := model.Retrying{Provider: openai.New("gpt-4o-mini", srv.URL+"/v1", "", nil),
		Policy: model.RetryPolicy{Attempts: 2, Base: time.Millisecond}}
	e := newEnv(t, Config{
		Models:       model.Registry{model.DefaultName: scripted.Scripted{}, openAIModel: p},
		DefaultModel: openAIModel,
	})
	return e, srv
}

const fixtures = "../../model/testdata/openai/"

// One turn of two steps: two tool calls streamed across chunks, run by the
// engine, their results sent back, then the answer; a usage part per step.
func TestOpenAITurnWithTools(t *testing.T) {
	e, srv := providerEnv(t)
	srv.Queue(providertest.Reply{Fixture: fixtures + "tools.sse"}, providertest.Reply{Fixture: fixtures + "text.sse"})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "Weather in Paris, and 6*7?")
	d.converge()

	msg := e.lastAgent(sid)
	if msg.State != synccore.MessageDone || textOf(msg, synccore.PartText) != "Checking both.Hello there, friend." {
		t.Fatalf("message %s text %q", msg.State, textOf(msg, synccore.PartText))
	}
	tools := partsOf(msg, synccore.PartTool)
	if len(tools) != 2 || tools[0].State != synccore.ToolOutputAvailable || tools[1].State != synccore.ToolOutputAvailable {
		t.Fatalf("tools %+v", tools)
	}
	if r := model.Field(tools[0].Input, "city"); r != "Paris" {
		t.Fatalf("weather input %v", tools[0].Input)
	}
	usage := partsOf(msg, synccore.PartData)
	if len(usage) != 2 || usage[0].DataType != model.DataUsage || usage[0].StepID != "step-1" || usage[1].StepID != "step-2" {
		t.Fatalf("usage parts %+v", usage)
	}
	// The client saw the input JSON stream in before it was complete.
	partial := false
	for _, f := range d.frames {
		if f.Kind == synccore.FramePart && f.Part.Type == synccore.PartTool && f.Part.State == synccore.ToolInputStreaming {
			if s, ok := f.Part.Input.(string); ok && strings.HasPrefix(`{"city": "Paris"}`, s) && s != "" {
				partial = true
			}
		}
	}
	if !partial {
		t.Fatal("no input-streaming frame carried partial input JSON")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[1].Body["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "tool" || last["tool_call_id"] != "call_c2" ||
		!strings.Contains(last["content"].(string), "42") {
		t.Fatalf("second request ends with %v", last)
	}
}

func lastError(t *testing.T, msg synccore.Message) synccore.Part {
	t.Helper()
	errs := partsOf(msg, synccore.PartError)
	if len(errs) == 0 {
		t.Fatalf("message has no error part: %+v", msg.Parts)
	}
	return errs[len(errs)-1]
}

func TestOpenAIRefusedKeyIsNotRecoverable(t *testing.T) {
	e, srv := providerEnv(t)
	srv.Queue(providertest.Reply{Status: http.StatusUnauthorized, Fixture: fixtures + "401.json"})
	sid := e.session("")
	e.post(sid, "hi")
	e.waitIdle()
	ep := lastError(t, e.lastAgent(sid))
	if ep.Code != CodeModelError || ep.Recoverable || !strings.Contains(ep.Message, "401") {
		t.Fatalf("error part %+v", ep)
	}
}

func TestOpenAIFailureAfterFirstTokenIsRecoverable(t *testing.T) {
	e, srv := providerEnv(t)
	srv.Queue(providertest.Reply{Fixture: fixtures + "error-midstream.sse"})
	sid := e.session("")
	e.post(sid, "hi")
	e.waitIdle()
	msg := e.lastAgent(sid)
	ep := lastError(t, msg)
	if ep.Code != CodeModelError || !ep.Recoverable || textOf(msg, synccore.PartText) != "Half an" {
		t.Fatalf("error part %+v text %q", ep, textOf(msg, synccore.PartText))
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("%d requests: nothing is resent after the first token", len(srv.Requests()))
	}
}

// stop ends a slow provider stream at once: the HTTP request is cancelled.
func TestOpenAIStopCancelsTheRequest(t *testing.T) {
	e, srv := providerEnv(t)
	srv.Queue(providertest.Reply{Fixture: fixtures + "text.sse", Delay: 300 * time.Millisecond})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "hi")
	d.pumpUntil("the first delta", func() bool {
		v, ok := d.viewAgent()
		return ok && textOf(v, synccore.PartText) != ""
	})
	if _, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionStop}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.Canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the provider's request was not cancelled")
	}
	// No wall-clock bound: the stream's remaining events (300 ms apart)
	// never reached the message, so the stop cut the request short.
	stopped := e.lastAgent(sid)
	if ep := lastError(t, stopped); ep.Code != CodeStopped {
		t.Fatalf("error part %+v", ep)
	}
	if text := textOf(stopped, synccore.PartText); text == "Hello there, friend." {
		t.Fatalf("the whole fixture streamed (%q): the stop did not cut the request", text)
	}
}
