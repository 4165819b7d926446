package composer

import (
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

func user(vis synccore.Visibility, parts ...synccore.Part) synccore.Message {
	return synccore.Message{Role: synccore.RoleUser, Visibility: vis, Parts: parts}
}

func agent(parts ...synccore.Part) synccore.Message {
	return synccore.Message{Role: synccore.RoleAgent, State: synccore.MessageDone, Visibility: synccore.VisibilityVisible, Parts: parts}
}

func text(s string) model.InputContent { return model.InputContent{Type: model.ContentText, Text: s} }

func TestCompose(t *testing.T) {
	tool := func(step, id string, state synccore.PartState, out any) synccore.Part {
		return synccore.Part{Type: synccore.PartTool, StepID: step, ToolCallID: id, ToolName: "calculator",
			State: state, Input: map[string]any{"expression": "1+1"}, Output: out}
	}
	call := func(id string) model.InputContent {
		return model.InputContent{Type: model.ContentToolCall, ToolCallID: id, ToolName: "calculator",
			Input: map[string]any{"expression": "1+1"}}
	}
	tests := []struct {
		name    string
		history []synccore.Message
		want    []model.InputMessage
	}{
		{
			name:    "empty history",
			history: nil,
			want:    []model.InputMessage{},
		},
		{
			name: "user text and context become text, data never reaches the model",
			history: []synccore.Message{user(synccore.VisibilityVisible,
				synccore.Part{Type: synccore.PartText, Text: "hi"},
				synccore.Part{PartID: "user-context:1", Sequence: 1, Type: synccore.PartContext, Tag: "reference", Context: "earlier message"},
				synccore.Part{Type: synccore.PartData, DataType: "ui", Data: map[string]any{"x": 1}},
			)},
			want: []model.InputMessage{{Role: model.RoleUser, Content: []model.InputContent{
				text("hi"), text("<reference>earlier message</reference>"),
			}}},
		},
		{
			name: "a user message of data parts only is left out",
			history: []synccore.Message{user(synccore.VisibilityVisible,
				synccore.Part{Type: synccore.PartData, DataType: "ui", Data: 1})},
			want: []model.InputMessage{},
		},
		{
			name: "internal messages reach the model",
			history: []synccore.Message{user(synccore.VisibilityInternal,
				synccore.Part{Type: synccore.PartText, Text: "recover: continue"})},
			want: []model.InputMessage{{Role: model.RoleUser, Content: []model.InputContent{text("recover: continue")}, Internal: true}},
		},
		{
			name: "files pass through",
			history: []synccore.Message{user(synccore.VisibilityVisible,
				synccore.Part{Type: synccore.PartFile, URL: "https://x/y.png", MediaType: "image/png", Filename: "y.png"})},
			want: []model.InputMessage{{Role: model.RoleUser, Content: []model.InputContent{
				{Type: model.ContentFile, URL: "https://x/y.png", MediaType: "image/png", Filename: "y.png"},
			}}},
		},
		{
			name: "agent steps split into assistant entries followed by their tool results",
			history: []synccore.Message{agent(
				synccore.Part{Type: synccore.PartReasoning, StepID: "step-1", Text: "think"},
				synccore.Part{Type: synccore.PartText, StepID: "step-1", Text: "let me add"},
				tool("step-1", "c1", synccore.ToolOutputAvailable, 2),
				synccore.Part{Type: synccore.PartText, StepID: "step-2", Text: "it is 2"},
				synccore.Part{Type: synccore.PartAction, StepID: "", ActionType: "set_model", Title: "x"},
				synccore.Part{Type: synccore.PartError, Code: "stopped", Scope: synccore.ErrorScopeTurn},
			)},
			want: []model.InputMessage{
				{Role: model.RoleAssistant, Content: []model.InputContent{
					{Type: model.ContentReasoning, Text: "think"}, text("let me add"), call("c1"),
				}},
				{Role: model.RoleTool, Content: []model.InputContent{{
					Type: model.ContentToolResult, ToolCallID: "c1", ToolName: "calculator", Output: 2,
					ToolState: string(synccore.ToolOutputAvailable),
				}}},
				{Role: model.RoleAssistant, Content: []model.InputContent{text("it is 2")}},
			},
		},
		{
			name: "denied and failed tools are error results; unfinished tools have none; interactions are left out",
			history: []synccore.Message{agent(
				tool("step-1", "c1", synccore.ToolOutputDenied, map[string]any{"denied": true}),
				synccore.Part{Type: synccore.PartInteraction, StepID: "step-1", Status: synccore.InteractionResolved},
				tool("step-1", "c2", synccore.ToolOutputError, "boom"),
				tool("step-1", "c3", synccore.ToolRunning, nil),
			)},
			want: []model.InputMessage{
				{Role: model.RoleAssistant, Content: []model.InputContent{call("c1"), call("c2"), call("c3")}},
				{Role: model.RoleTool, Content: []model.InputContent{{
					Type: model.ContentToolResult, ToolCallID: "c1", ToolName: "calculator",
					Output: map[string]any{"denied": true}, ToolState: string(synccore.ToolOutputDenied), IsError: true,
				}}},
				{Role: model.RoleTool, Content: []model.InputContent{{
					Type: model.ContentToolResult, ToolCallID: "c2", ToolName: "calculator",
					Output: "boom", ToolState: string(synccore.ToolOutputError), IsError: true,
				}}},
			},
		},
		{
			name: "an agent message with no model content adds nothing",
			history: []synccore.Message{agent(
				synccore.Part{Type: synccore.PartAction, ActionType: "stop", Title: "Stopped"})},
			want: []model.InputMessage{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Compose(tc.history)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Compose:\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
