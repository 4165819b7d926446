package model_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/anthropic"
	"github.com/agentsync/agentsync/server/model/openai"
)

// played is what one step emitted, folded for assertions.
type played struct {
	text, reasoning string
	blocks          []string          // block kinds in order: text / reasoning
	toolInputs      map[string]string // streamed input JSON by call id
	calls           []model.Event     // tool-call events
	usage           map[string]any    // the usage data part
	finish          string
	order           []string // event types
}

func play(t *testing.T, p model.Provider, req model.Request) (played, error) {
	t.Helper()
	got := played{toolInputs: map[string]string{}}
	err := p.Stream(context.Background(), req, func(ev model.Event) error {
		got.order = append(got.order, ev.Type)
		switch ev.Type {
		case model.EvTextStart:
			got.blocks = append(got.blocks, "text")
		case model.EvReasoningStart:
			got.blocks = append(got.blocks, "reasoning")
		case model.EvTextDelta:
			got.text += ev.Delta
		case model.EvReasoningDelta:
			got.reasoning += ev.Delta
		case model.EvToolInputDelta:
			got.toolInputs[ev.ToolCallID] += ev.Delta
		case model.EvToolCall:
			got.calls = append(got.calls, ev)
		case model.EvData:
			if ev.DataType == model.DataUsage {
				got.usage = ev.Data.(map[string]any)
			}
		case model.EvFinish:
			got.finish = ev.FinishReason
		}
		return nil
	})
	return got, err
}

// providers under test: each kind with its fixture folder.
type kind struct {
	name string
	open func(baseURL string) model.Provider
}

var fastRetry = model.RetryPolicy{Attempts: 3, Base: time.Millisecond, Max: 5 * time.Millisecond}

var kinds = []kind{
	{"openai", func(u string) model.Provider {
		return model.Retrying{Provider: openai.New("gpt-4o-mini", u+"/v1", "sk-test", nil), Policy: fastRetry}
	}},
	{"anthropic", func(u string) model.Provider {
		return model.Retrying{Provider: anthropic.New("claude-sonnet-4-5", u, "sk-ant-test", nil), Policy: fastRetry}
	}},
}

func fixture(k kind, name string) string { return filepath.Join("testdata", k.name, name) }

var hello = model.Request{Model: "m", Messages: []model.InputMessage{
	{Role: model.RoleUser, Content: []model.InputContent{{Type: model.ContentText, Text: "hi"}}},
}}

func TestProviderText(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "text.sse")})
			got, err := play(t, k.open(srv.URL), hello)
			if err != nil {
				t.Fatal(err)
			}
			if got.text != "Hello there, friend." || got.finish != model.FinishStop {
				t.Fatalf("text %q finish %q", got.text, got.finish)
			}
			if got.usage == nil || got.usage["input_tokens"] == nil || got.usage["output_tokens"] == nil {
				t.Fatalf("usage %v", got.usage)
			}
			if last := got.order[len(got.order)-1]; last != model.EvFinish {
				t.Fatalf("last event %s, want finish", last)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Body["stream"] != true {
				t.Fatalf("requests %+v", reqs)
			}
		})
	}
}

func TestProviderReasoning(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "reasoning.sse")})
			got, err := play(t, k.open(srv.URL), hello)
			if err != nil {
				t.Fatal(err)
			}
			if got.reasoning != "The user greets me. A short reply fits." || got.text != "Hi!" {
				t.Fatalf("reasoning %q text %q", got.reasoning, got.text)
			}
			if !reflect.DeepEqual(got.blocks, []string{"reasoning", "text"}) {
				t.Fatalf("blocks %v", got.blocks)
			}
		})
	}
}

// Ollama streams its reasoning in "reasoning", not "reasoning_content".
func TestOpenAIReasoningField(t *testing.T) {
	srv := providertest.New()
	defer srv.Close()
	srv.Queue(providertest.Reply{Fixture: "testdata/openai/reasoning-ollama.sse"})
	got, err := play(t, kinds[0].open(srv.URL), hello)
	if err != nil || got.reasoning != "Thinking." || got.text != "Done." {
		t.Fatalf("reasoning %q text %q err %v", got.reasoning, got.text, err)
	}
}

func TestProviderToolCalls(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "tools.sse")})
			req := hello
			req.Tools = []model.ToolSpec{{Name: "get_weather", Description: "w", InputSchema: map[string]any{
				"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}},
				{Name: "calculator", Description: "c"}}
			got, err := play(t, k.open(srv.URL), req)
			if err != nil {
				t.Fatal(err)
			}
			if got.text != "Checking both." || got.finish != model.FinishToolCalls || len(got.calls) != 2 {
				t.Fatalf("text %q finish %q calls %+v", got.text, got.finish, got.calls)
			}
			w, c := got.calls[0], got.calls[1]
			if w.ToolName != "get_weather" || !reflect.DeepEqual(w.Input, map[string]any{"city": "Paris"}) {
				t.Fatalf("weather call %+v", w)
			}
			if c.ToolName != "calculator" || !reflect.DeepEqual(c.Input, map[string]any{"expression": "6*7"}) {
				t.Fatalf("calculator call %+v", c)
			}
			if got.toolInputs[w.ToolCallID] != `{"city": "Paris"}` {
				t.Fatalf("streamed input %q", got.toolInputs[w.ToolCallID])
			}
			// Each call starts before its input streams.
			starts := strings.Count(strings.Join(got.order, " "), model.EvToolInputStart)
			if starts != 2 {
				t.Fatalf("%d tool-input-start events", starts)
			}
			body := srv.Requests()[0].Body
			if tools, _ := body["tools"].([]any); len(tools) != 2 {
				t.Fatalf("request tools %v", body["tools"])
			}
		})
	}
}

// A step's tool results go back in the provider's own shape.
func TestProviderSendsToolResults(t *testing.T) {
	history := []model.InputMessage{
		{Role: model.RoleSystem, Content: []model.InputContent{{Type: model.ContentText, Text: "Summary: earlier talk."}}},
		{Role: model.RoleUser, Content: []model.InputContent{{Type: model.ContentText, Text: "6*7?"}}},
		{Role: model.RoleAssistant, Content: []model.InputContent{
			{Type: model.ContentText, Text: "Let me compute."},
			{Type: model.ContentToolCall, ToolCallID: "call_1", ToolName: "calculator", Input: map[string]any{"expression": "6*7"}}}},
		{Role: model.RoleTool, Content: []model.InputContent{{Type: model.ContentToolResult, ToolCallID: "call_1", ToolName: "calculator",
			Output: map[string]any{"result": 42}}}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "text.sse")})
			if _, err := play(t, k.open(srv.URL), model.Request{Model: "m", Messages: history}); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].Body
			msgs := body["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			switch k.name {
			case "openai":
				if len(msgs) != 4 || last["role"] != "tool" || last["tool_call_id"] != "call_1" || last["content"] != `{"result":42}` {
					t.Fatalf("messages %v", msgs)
				}
			case "anthropic":
				// system apart; user, assistant(tool_use), user(tool_result)
				block := last["content"].([]any)[0].(map[string]any)
				if len(msgs) != 3 || body["system"] == nil || block["type"] != "tool_result" || block["tool_use_id"] != "call_1" {
					t.Fatalf("messages %v system %v", msgs, body["system"])
				}
			}
		})
	}
}

func modelError(t *testing.T, err error) *model.Error {
	t.Helper()
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T) is not a *model.Error", err, err)
	}
	return me
}

func TestProviderErrorMidStream(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "error-midstream.sse")})
			got, err := play(t, k.open(srv.URL), hello)
			me := modelError(t, err)
			if !me.Recoverable || got.text != "Half an" || got.finish != "" {
				t.Fatalf("err %+v text %q finish %q", me, got.text, got.finish)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests: a failure after the first token must not be resent", n)
			}
		})
	}
}

func TestProviderNoFinishIsAnError(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "no-finish.sse")})
			got, err := play(t, k.open(srv.URL), hello)
			if !errors.Is(err, model.ErrNoFinish) || got.finish != "" || got.text != "Cut sho" {
				t.Fatalf("err %v finish %q text %q", err, got.finish, got.text)
			}
		})
	}
}

func TestProviderCutConnection(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "text.sse"), CutAfter: 3})
			got, err := play(t, k.open(srv.URL), hello)
			me := modelError(t, err)
			if !me.Recoverable || got.finish != "" {
				t.Fatalf("err %+v finish %q", me, got.finish)
			}
		})
	}
}

// A cut before the first event is retried like a 429.
func TestProviderRetriesBeforeFirstToken(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(
				providertest.Reply{Status: http.StatusTooManyRequests, Fixture: fixture(k, "429.json")},
				providertest.Reply{Status: http.StatusServiceUnavailable, Body: []byte(`{"error":{"message":"busy"}}`)},
				// Cut after the opening event, before any token.
				providertest.Reply{Fixture: fixture(k, "text.sse"), CutAfter: 1},
				providertest.Reply{Fixture: fixture(k, "text.sse")},
			)
			p := model.Retrying{Provider: k.open(srv.URL).(model.Retrying).Provider,
				Policy: model.RetryPolicy{Attempts: 4, Base: time.Millisecond}}
			got, err := play(t, p, hello)
			if err != nil || got.text != "Hello there, friend." {
				t.Fatalf("err %v text %q", err, got.text)
			}
			if n := len(srv.Requests()); n != 4 {
				t.Fatalf("%d requests, want 4", n)
			}
		})
	}
}

func TestProviderRetryIsBounded(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			for range 5 {
				srv.Queue(providertest.Reply{Status: http.StatusTooManyRequests, Fixture: fixture(k, "429.json")})
			}
			_, err := play(t, k.open(srv.URL), hello)
			me := modelError(t, err)
			if me.Status != http.StatusTooManyRequests || !me.Recoverable {
				t.Fatalf("err %+v", me)
			}
			if n := len(srv.Requests()); n != fastRetry.Attempts {
				t.Fatalf("%d requests, want %d", n, fastRetry.Attempts)
			}
		})
	}
}

func TestProviderUnauthorizedIsFinal(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Status: http.StatusUnauthorized, Fixture: fixture(k, "401.json")})
			_, err := play(t, k.open(srv.URL), hello)
			me := modelError(t, err)
			if me.Recoverable || me.Retryable || me.Status != http.StatusUnauthorized || len(srv.Requests()) != 1 {
				t.Fatalf("err %+v after %d requests", me, len(srv.Requests()))
			}
			if !strings.Contains(err.Error(), "401") {
				t.Fatalf("error %q does not name the cause", err)
			}
		})
	}
}

// Cancelling the step's context (what stop does) ends the HTTP request at
// once: the server sees the client go while it is still streaming.
func TestProviderCancelEndsTheRequest(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "text.sse"), Delay: 200 * time.Millisecond})
			ctx, cancel := context.WithCancelCause(context.Background())
			stopped := errors.New("stopped by the user")
			first := make(chan struct{}, 1)
			done := make(chan error, 1)
			go func() {
				done <- k.open(srv.URL).Stream(ctx, hello, func(ev model.Event) error {
					select {
					case first <- struct{}{}:
					default:
					}
					return nil
				})
			}()
			<-first
			cancel(stopped)
			select {
			case err := <-done:
				if !errors.Is(err, stopped) {
					t.Fatalf("err %v, want the cancel cause", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Stream did not return after cancel")
			}
			select {
			case <-srv.Canceled:
			case <-time.After(5 * time.Second):
				t.Fatal("the server never saw the request end")
			}
		})
	}
}
