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
