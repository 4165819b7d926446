package model

import (
	"context"
	"fmt"
	"hash/fnv"
)

// Tool is something the engine runs for a model's tool call.
type Tool interface {
	Spec() ToolSpec
	// Run executes the call; a returned error becomes the tool's
	// output-error state, not a turn failure.
	Run(ctx context.Context, input any) (any, error)
}

// FuncTool is a Tool made of a spec and a function.
type FuncTool struct {
	ToolSpec
	Fn func(ctx context.Context, input any) (any, error)
}

func (t FuncTool) Spec() ToolSpec                                  { return t.ToolSpec }
func (t FuncTool) Run(ctx context.Context, input any) (any, error) { return t.Fn(ctx, input) }

// Demo tool names, used by the scripted scenarios.
const (
	ToolWeather    = "get_weather"
	ToolCalculator = "calculator"
	ToolSendEmail  = "send_email"
	ToolAskUser    = "ask_user"
)

// DemoTools are the scripted model's tools; their outputs are deterministic.
func DemoTools() []Tool {
	return []Tool{
		FuncTool{ToolSpec{Name: ToolWeather, Description: "Current weather of a city (demo data)."}, weather},
		FuncTool{ToolSpec{Name: ToolCalculator, Description: "Evaluates an arithmetic expression: + - * / and parentheses."}, calculator},
		FuncTool{ToolSpec{Name: ToolSendEmail, Description: "Sends an email (demo: nothing leaves the server).", NeedsApproval: true}, sendEmail},
		FuncTool{ToolSpec{Name: ToolAskUser, Description: "Asks the user a question; the output is the answer.", AsksUser: true}, askUser},
	}
}

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

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func weather(_ context.Context, input any) (any, error) {
	city := Field(input, "city")
	if city == "" {
		return nil, fmt.Errorf("get_weather: input needs a city")
	}
	h := hash(city)
	conditions := []string{"sunny", "cloudy", "rainy", "windy", "snowy"}
	return map[string]any{
		"city":          city,
		"temperature_c": int64(h%35) - 5,
		"conditions":    conditions[h%uint32(len(conditions))],
	}, nil
}

func calculator(_ context.Context, input any) (any, error) {
	expr := Field(input, "expression")
	v, err := Eval(expr)
	if err != nil {
		return nil, err
	}
	return map[string]any{"expression": expr, "result": v}, nil
}

func sendEmail(_ context.Context, input any) (any, error) {
	to := Field(input, "to")
	if to == "" {
		return nil, fmt.Errorf("send_email: input needs a recipient")
	}
	return map[string]any{"status": "sent", "id": fmt.Sprintf("demo-%08x", hash(to+Field(input, "subject")))}, nil
}

// askUser is never run: the engine answers it with the user's answer. It is
// here so the tool has a spec; running it is a bug.
func askUser(_ context.Context, _ any) (any, error) {
	return nil, fmt.Errorf("ask_user is answered by the user, not run")
}
