package scripted

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentsync/agentsync/server/model"
)

// run plays one step and collects its events.
func run(t *testing.T, msgs ...model.InputMessage) ([]model.Event, error) {
	t.Helper()
	var evs []model.Event
	err := Scripted{}.Stream(context.Background(), model.Request{Step: 1, Messages: msgs}, func(ev model.Event) error {
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}

func userMsg(text string) model.InputMessage {
	return model.InputMessage{Role: model.RoleUser, Content: []model.InputContent{{Type: model.ContentText, Text: text}}}
}

func textOf(evs []model.Event, deltaType string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type == deltaType {
			b.WriteString(ev.Delta)
		}
	}
	return b.String()
}

func TestParseScenario(t *testing.T) {
	sc, ok := parseScenario("  scenario:TEXT chars=10 delta=3 junk")
	if !ok || sc.Name != "text" || sc.Int("chars", 0, 0, 100) != 10 || sc.Int("delta", 0, 0, 100) != 3 {
		t.Fatalf("got %+v %v", sc, ok)
	}
	if sc.Int("missing", 7, 0, 100) != 7 || sc.Int("chars", 0, 20, 100) != 20 {
		t.Fatal("defaults and clamping")
	}
	if _, ok := parseScenario("hello scenario:text"); ok {
		t.Fatal("a scenario must start the text")
	}
	if sc, _ := parseScenario("scenario:"); sc.Name != "help" {
		t.Fatal("bare scenario: is help")
	}
}

func TestLoremIsDeterministicAndExact(t *testing.T) {
	a, b := lorem("seed", 1000), lorem("seed", 1000)
	if a != b || utf8.RuneCountInString(a) != 1000 || len(a) == 1000 {
		t.Fatalf("lorem: %d runes, %d bytes, equal %v", utf8.RuneCountInString(a), len(a), a == b)
	}
	if lorem("other", 1000) == a {
		t.Fatal("seed must matter")
	}
}

func TestTextScenarioDeltasNeverSplitRunes(t *testing.T) {
	evs, err := run(t, userMsg("scenario:text chars=500 delta=1"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		if ev.Type == model.EvTextDelta {
			n++
			if utf8.RuneCountInString(ev.Delta) != 1 || !utf8.ValidString(ev.Delta) {
				t.Fatalf("delta %q", ev.Delta)
			}
		}
	}
	if n != 500 || utf8.RuneCountInString(textOf(evs, model.EvTextDelta)) != 500 {
		t.Fatalf("%d deltas", n)
	}
	if evs[0].Type != model.EvTextStart || evs[len(evs)-1].FinishReason != model.FinishStop {
		t.Fatalf("shape: %v ... %v", evs[0], evs[len(evs)-1])
	}
}

func TestEchoAndHelp(t *testing.T) {
	evs, _ := run(t, userMsg("hi there"))
	if !strings.HasPrefix(textOf(evs, model.EvTextDelta), "You said: “hi there”.") {
		t.Fatalf("echo: %q", textOf(evs, model.EvTextDelta))
	}
	evs, _ = run(t, userMsg("scenario:help"))
	for _, s := range Scenarios {
		if !strings.Contains(textOf(evs, model.EvTextDelta), "- "+s.Name+":") {
			t.Fatalf("help misses %s", s.Name)
		}
	}
}

func TestReasoningThenText(t *testing.T) {
	evs, _ := run(t, userMsg("scenario:reasoning chars=50"))
	if textOf(evs, model.EvReasoningDelta) == "" || utf8.RuneCountInString(textOf(evs, model.EvTextDelta)) != 50 {
		t.Fatal("reasoning then 50 runes of text")
	}
	if evs[0].Type != model.EvReasoningStart {
		t.Fatalf("first event %s", evs[0].Type)
	}
}

func TestErrorScenarioFailsMidStream(t *testing.T) {
	evs, err := run(t, userMsg("scenario:error chars=100"))
	if !errors.Is(err, ErrScripted) {
		t.Fatalf("err %v", err)
	}
	if got := utf8.RuneCountInString(textOf(evs, model.EvTextDelta)); got == 0 || got >= 100 {
		t.Fatalf("streamed %d runes before failing", got)
	}
}

func TestToolsScenarioSteps(t *testing.T) {
	u := userMsg("scenario:tools city=Oslo")
	evs, _ := run(t, u)
	call := evs[len(evs)-2]
	if call.Type != model.EvToolCall || call.ToolName != ToolWeather || model.Field(call.Input, "city") != "Oslo" ||
		evs[len(evs)-1].FinishReason != model.FinishToolCalls {
		t.Fatalf("step 1: %+v", evs)
	}
	w, err := weather(context.Background(), call.Input)
	if err != nil {
		t.Fatal(err)
	}
	res := func(name string, out any) model.InputMessage {
		return model.InputMessage{Role: model.RoleTool, Content: []model.InputContent{{Type: model.ContentToolResult, ToolName: name, Output: out, ToolState: "output-available"}}}
	}
	evs, _ = run(t, u, res(ToolWeather, w))
	call = evs[len(evs)-2]
	if call.ToolName != ToolCalculator {
		t.Fatalf("step 2: %+v", call)
	}
	c, err := calculator(context.Background(), call.Input)
	if err != nil {
		t.Fatal(err)
	}
	evs, _ = run(t, u, res(ToolWeather, w), res(ToolCalculator, c))
	if final := textOf(evs, model.EvTextDelta); !strings.Contains(final, "In Oslo it is") || evs[len(evs)-1].FinishReason != model.FinishStop {
		t.Fatalf("step 3: %q", final)
	}
}

func TestApprovalScenarioBothWays(t *testing.T) {
	u := userMsg("scenario:approval")
	evs, _ := run(t, u)
	if evs[len(evs)-2].ToolName != ToolSendEmail {
		t.Fatal("asks to send an email")
	}
	denied := model.InputMessage{Role: model.RoleTool, Content: []model.InputContent{{Type: model.ContentToolResult, ToolState: "output-denied", IsError: true}}}
	evs, _ = run(t, u, denied)
	if !strings.Contains(textOf(evs, model.EvTextDelta), "did not send") {
		t.Fatal("deny path")
	}
	ok := model.InputMessage{Role: model.RoleTool, Content: []model.InputContent{{Type: model.ContentToolResult, ToolState: "output-available", Output: map[string]any{"id": "x1"}}}}
	evs, _ = run(t, u, ok)
	if !strings.Contains(textOf(evs, model.EvTextDelta), "sent (x1)") {
		t.Fatal("approve path")
	}
}

func TestEval(t *testing.T) {
	for expr, want := range map[string]float64{"1+2*3": 7, "(1+2)*3": 9, "-4/2": -2, "21*9/5+32": 69.8} {
		if got, err := evalExpr(expr); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
	}
	for _, bad := range []string{"", "1+", "(1", "1/0", "x", strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100)} {
		if _, err := evalExpr(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestAttemptVaries: another version of an answer (a regeneration) plays
// the same scenario with a visible difference, deterministically.
func TestAttemptVaries(t *testing.T) {
	play := func(text string, attempt int) string {
		var b strings.Builder
		err := Scripted{}.Stream(context.Background(), model.Request{Step: 1, Messages: []model.InputMessage{userMsg(text)}, Attempt: attempt},
			func(ev model.Event) error {
				if ev.Type == model.EvTextDelta {
					b.WriteString(ev.Delta)
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, text := range []string{"hello there", "scenario:text chars=300", "scenario:reasoning chars=100"} {
		first, again, second := play(text, 0), play(text, 0), play(text, 1)
		if first != again {
			t.Fatalf("%q: not deterministic", text)
		}
		if second == first || !strings.HasPrefix(second, "(Take 2) ") || strings.HasPrefix(first, "(Take") {
			t.Fatalf("%q: attempt 1 = %.60q, attempt 0 = %.60q", text, second, first)
		}
		if play(text, 2) == second || play(text, 1) != second {
			t.Fatalf("%q: attempts are not distinct and deterministic", text)
		}
	}
	if got := play("hi", 1); !strings.Contains(got, "You said: “hi”.") {
		t.Fatalf("a regenerated echo quotes the message as it is: %q", got)
	}
}
