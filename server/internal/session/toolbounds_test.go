package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"

	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// callsThen calls tool once with input, then answers with the tool's final
// state and output as text.
func callsThen(tool string, input map[string]any) model.Provider {
	return providerFunc(func(ctx context.Context, req model.Request, emit func(model.Event) error) error {
		if req.Step == 1 {
			return emitAll(emit, model.Event{Type: model.EvToolCall, ToolCallID: "c1", ToolName: tool, Input: input},
				model.Event{Type: model.EvFinish, FinishReason: model.FinishToolCalls})
		}
		last := req.Messages[len(req.Messages)-1].Content[0]
		return emitAll(emit, model.Event{Type: model.EvTextStart, BlockID: "t"},
			model.Event{Type: model.EvTextDelta, BlockID: "t", Delta: last.ToolState},
			model.Event{Type: model.EvTextEnd, BlockID: "t"})
	})
}

// A tool that hangs past its timeout, or talks too much, never kills the
// turn: the first is output-error, the second's output is cut.
func TestToolBounds(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hangs := model.FuncTool{ToolSpec: model.ToolSpec{Name: "hangs"}, Fn: func(ctx context.Context, _ any) (any, error) {
		<-release // ignores ctx on purpose
		return "late", nil
	}}
	chatty := model.FuncTool{ToolSpec: model.ToolSpec{Name: "chatty"}, Fn: func(context.Context, any) (any, error) {
		return strings.Repeat("é", 10_000), nil
	}}
	e := newEnv(t, Config{
		Models: model.Registry{
			model.DefaultName: scripted.Scripted{},
			"hang":            callsThen("hangs", nil),
			"chat":            callsThen("chatty", nil),
			"clock":           callsThen(scripted.ToolCurrentTime, map[string]any{"time_zone": "Europe/Paris"}),
		},
		Tools:         append(scripted.DemoTools(), hangs, chatty),
		ToolTimeout:   50 * time.Millisecond,
		MaxToolOutput: 1000,
	})
	run := func(modelName string) synccore.Message {
		sid := e.session(modelName)
		e.post(sid, "go")
		e.waitIdle()
		return e.lastAgent(sid)
	}

	a := run("hang")
	tool := partsOf(a, synccore.PartTool)[0]
	if a.State != synccore.MessageDone || tool.State != synccore.ToolOutputError ||
		!strings.Contains(model.Field(tool.Output, "error"), "did not finish") || textOf(a, synccore.PartText) != string(synccore.ToolOutputError) {
		t.Fatalf("hanging tool: %s %+v text %q", a.State, tool, textOf(a, synccore.PartText))
	}

	a = run("chat")
	out, _ := partsOf(a, synccore.PartTool)[0].Output.(map[string]any)
	head, _ := out["head"].(string)
	if out["truncated"] != true || len(head) > 1000 || len(head) < 990 || textOf(a, synccore.PartText) != string(synccore.ToolOutputAvailable) {
		t.Fatalf("chatty tool output %v", out)
	}

	a = run("clock")
	out, _ = partsOf(a, synccore.PartTool)[0].Output.(map[string]any)
	if out["time_zone"] != "Europe/Paris" {
		t.Fatalf("current_time output %v", out)
	}
	if _, err := time.Parse(time.RFC3339, model.Field(out, "time")); err != nil {
		t.Fatalf("current_time: %v", err)
	}
}
