package session

import (
	"context"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/model"

	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// providerFunc adapts a function to model.Provider.
type providerFunc func(ctx context.Context, req model.Request, emit func(model.Event) error) error

func (f providerFunc) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	return f(ctx, req, emit)
}

func emitAll(emit func(model.Event) error, evs ...model.Event) error {
	for _, ev := range evs {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// Faulty models and tools fail their turn with an error part; the session
// stays usable and nothing is left streaming.
func TestFaultyModelsAndTools(t *testing.T) {
	boom := model.FuncTool{ToolSpec: model.ToolSpec{Name: "boom"}, Fn: func(context.Context, any) (any, error) {
		panic("tool exploded")
	}}
	models := model.Registry{
		model.DefaultName: scripted.Scripted{},
		"panics": providerFunc(func(ctx context.Context, req model.Request, emit func(model.Event) error) error {
			_ = emit(model.Event{Type: model.EvTextStart, BlockID: "t"})
			_ = emit(model.Event{Type: model.EvTextDelta, BlockID: "t", Delta: "about to"})
			panic("model exploded")
		}),
		"orphan-delta": providerFunc(func(ctx context.Context, req model.Request, emit func(model.Event) error) error {
			return emit(model.Event{Type: model.EvTextDelta, BlockID: "nope", Delta: "x"})
		}),
		"half-tool": providerFunc(func(ctx context.Context, req model.Request, emit func(model.Event) error) error {
			return emitAll(emit, model.Event{Type: model.EvToolInputStart, ToolCallID: "c1", ToolName: "boom"},
				model.Event{Type: model.EvFinish, FinishReason: model.FinishToolCalls})
		}),
		// Calls the panicking tool once, then answers with the result.
		"tool-panics": providerFunc(func(ctx context.Context, req model.Request, emit func(model.Event) error) error {
			if req.Step == 1 {
				return emitAll(emit, model.Event{Type: model.EvToolCall, ToolCallID: "c1", ToolName: "boom", Input: map[string]any{}},
					model.Event{Type: model.EvFinish, FinishReason: model.FinishToolCalls})
			}
			last := req.Messages[len(req.Messages)-1].Content[0]
			return emitAll(emit, model.Event{Type: model.EvTextStart, BlockID: "t"},
				model.Event{Type: model.EvTextDelta, BlockID: "t", Delta: "tool said: " + last.ToolState},
				model.Event{Type: model.EvTextEnd, BlockID: "t"})
		}),
		"loops": providerFunc(func(ctx context.Context, req model.Request, emit func(model.Event) error) error {
			return emitAll(emit, model.Event{Type: model.EvToolCall, ToolCallID: req.StepID, ToolName: "get_weather",
				Input: map[string]any{"city": "Rome"}})
		}),
	}
	e := newEnv(t, Config{Models: models, Tools: append(scripted.DemoTools(), boom), MaxSteps: 4})
	for _, tc := range []struct{ model, code, text string }{
		{"panics", synccore.CodeInternal, "about to"},
		{"orphan-delta", synccore.CodeInvalidPart, ""},
		{"half-tool", synccore.CodeInvalidPart, ""},
		{"loops", CodeTooManySteps, ""},
		{"tool-panics", "", "tool said: output-error"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			e.t = t
			sid := e.session(tc.model)
			d := e.driver(sid)
			e.post(sid, "go")
			d.converge()
			a := e.lastAgent(sid)
			if a.State != synccore.MessageDone {
				t.Fatal("left streaming")
			}
			if got := textOf(a, synccore.PartText); got != tc.text {
				t.Fatalf("text %q, want %q", got, tc.text)
			}
			errs := partsOf(a, synccore.PartError)
			if tc.code == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected error parts %+v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Code != tc.code {
				t.Fatalf("error parts %+v, want code %s", errs, tc.code)
			}
			for _, p := range partsOf(a, synccore.PartTool) {
				if p.State != synccore.ToolOutputError && p.State != synccore.ToolOutputAvailable {
					t.Fatalf("tool left %s", p.State)
				}
			}
			// The session still works.
			if _, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetModel, Value: model.DefaultName}); err != nil {
				t.Fatal(err)
			}
			e.post(sid, "scenario:text chars=4")
			d.converge()
			if !strings.HasSuffix(string(e.lastAgent(sid).State), "done") {
				t.Fatal("the next turn did not finish")
			}
		})
	}
}
