package scripted

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"
	_ "time/tzdata" // current_time knows every zone on any machine

	"github.com/agentsync/agentsync/server/model"
)

// Demo tool names, used by the scripted scenarios.
const (
	ToolWeather     = "get_weather"
	ToolCalculator  = "calculator"
	ToolSendEmail   = "send_email"
	ToolAskUser     = "ask_user"
	ToolCurrentTime = "current_time"
)

// object is a JSON object schema with string properties, all required.
func object(props ...string) map[string]any {
	p := map[string]any{}
	for i := 0; i+1 < len(props); i += 2 {
		p[props[i]] = map[string]any{"type": "string", "description": props[i+1]}
	}
	req := make([]string, 0, len(props)/2)
	for i := 0; i < len(props); i += 2 {
		req = append(req, props[i])
	}
	return map[string]any{"type": "object", "properties": p, "required": req}
}

// BuiltinTools really work offline: a calculator, the current time, and
// ask_user (a question interaction).
func BuiltinTools() []model.Tool {
	return []model.Tool{
		model.FuncTool{ToolSpec: model.ToolSpec{Name: ToolCalculator, Description: "Evaluates an arithmetic expression: + - * / and parentheses.",
			InputSchema: object("expression", "the expression, e.g. (2+3)*4")}, Fn: calculator},
		model.FuncTool{ToolSpec: model.ToolSpec{Name: ToolCurrentTime, Description: "The current date and time, in UTC or an IANA time zone.",
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"time_zone": map[string]any{"type": "string", "description": "IANA zone such as Europe/Paris; default UTC"}}}}, Fn: currentTime},
		model.FuncTool{ToolSpec: model.ToolSpec{Name: ToolAskUser, Description: "Asks the user a question; the output is the answer.", AsksUser: true,
			InputSchema: object("question", "the question for the user")}, Fn: askUser},
	}
}

// DemoTools are the built-ins plus the scripted model's demo tools, whose
// outputs are deterministic.
func DemoTools() []model.Tool {
	return append([]model.Tool{
		model.FuncTool{ToolSpec: model.ToolSpec{Name: ToolWeather, Description: "Current weather of a city (demo data).",
			InputSchema: object("city", "the city")}, Fn: weather},
		model.FuncTool{ToolSpec: model.ToolSpec{Name: ToolSendEmail, Description: "Sends an email (demo: nothing leaves the server).", NeedsApproval: true,
			InputSchema: object("to", "recipient address", "subject", "subject line", "body", "the text")}, Fn: sendEmail},
	}, BuiltinTools()...)
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

func weather(_ context.Context, input any) (any, error) {
	city := model.Field(input, "city")
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
	expr := model.Field(input, "expression")
	v, err := evalExpr(expr)
	if err != nil {
		return nil, err
	}
	return map[string]any{"expression": expr, "result": v}, nil
}

func sendEmail(_ context.Context, input any) (any, error) {
	to := model.Field(input, "to")
	if to == "" {
		return nil, fmt.Errorf("send_email: input needs a recipient")
	}
	return map[string]any{"status": "sent", "id": fmt.Sprintf("demo-%08x", hash(to+model.Field(input, "subject")))}, nil
}

// askUser is never run: the engine answers it with the user's answer. It is
// here so the tool has a spec; running it is a bug.
func askUser(_ context.Context, _ any) (any, error) {
	return nil, fmt.Errorf("ask_user is answered by the user, not run")
}

// now is the clock current_time reads; tests replace it.
var now = time.Now

func currentTime(_ context.Context, input any) (any, error) {
	zone := model.Field(input, "time_zone")
	loc := time.UTC
	if zone != "" {
		l, err := time.LoadLocation(zone)
		if err != nil {
			return nil, fmt.Errorf("current_time: unknown time zone %q", zone)
		}
		loc = l
	}
	t := now().In(loc)
	return map[string]any{"time": t.Format(time.RFC3339), "time_zone": loc.String(), "weekday": t.Weekday().String()}, nil
}
