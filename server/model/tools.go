package model

import "context"

// Tool is something the engine runs for a model's tool call.
type Tool interface {
	// Spec describes the tool to the model and the engine.
	Spec() ToolSpec
	// Run executes the call; a returned error becomes the tool's
	// output-error state, not a turn failure.
	Run(ctx context.Context, input any) (any, error)
}

// FuncTool is a Tool made of a spec and a function.
type FuncTool struct {
	ToolSpec
	Fn func(ctx context.Context, input any) (any, error) // Run calls it
}

// Spec implements Tool.
func (t FuncTool) Spec() ToolSpec { return t.ToolSpec }

// Run implements Tool.
func (t FuncTool) Run(ctx context.Context, input any) (any, error) { return t.Fn(ctx, input) }

// Field reads a string field of a map-shaped tool input.
func Field(input any, key string) string {
	switch m := input.(type) {
	case map[string]any:
		s, _ := m[key].(string)
		return s
	case map[string]string:
		return m[key]
	}
	return ""
}

// ToolFiles is what a tool's Run returns to add files to the agent
// message: Output is the tool's output as usual, and each of Files becomes
// a file part of the agent message, after the tool part, in the same step
// (the write_file tool returns one).
type ToolFiles struct {
	Output any
	Files  []File
}

// File is a file a tool made: URL is what the file part carries (for a
// file of the session, the path its authorized file route serves).
type File struct {
	URL       string
	MediaType string
	Filename  string
}

// ToolCall says which call a tool's Run serves; the engine puts it in the
// context Run gets (ToolCallOf).
type ToolCall struct {
	SessionID  string
	TurnID     string
	ToolCallID string
}

type toolCallKey struct{}

// WithToolCall is ctx carrying c, for a tool's Run.
func WithToolCall(ctx context.Context, c ToolCall) context.Context {
	return context.WithValue(ctx, toolCallKey{}, c)
}

// ToolCallOf is the call a tool's Run serves; ok is false outside the
// engine (a test calling Run directly, say).
func ToolCallOf(ctx context.Context) (ToolCall, bool) {
	c, ok := ctx.Value(toolCallKey{}).(ToolCall)
	return c, ok
}
