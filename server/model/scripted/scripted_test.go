package scripted

import (
	"context"
	"errors"
	"regexp"
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

// TestLoremEndsOnAWord: whatever the length asked, the text is exactly
// that many runes of whole words (an answer that stops mid-word reads as
// cut off).
func TestLoremEndsOnAWord(t *testing.T) {
	t.Parallel()
	known := map[string]bool{"—": true, "do": true, "sit": true, "amet": true, "lorem": true, "tempor": true, "eiusmod": true}
	for _, w := range strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua café naïve déjà vu façade — über smörgåsbord") {
		known[w] = true
	}
	for _, seed := range []string{"a", "seed", "scenario:text", "x\x00take1"} {
		for n := 1; n <= 400; n++ {
			s := lorem(seed, n)
			if utf8.RuneCountInString(s) != n || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") || strings.Contains(s, "  ") {
				t.Fatalf("lorem(%q, %d) = %q: %d runes", seed, n, s, utf8.RuneCountInString(s))
			}
			for _, w := range strings.Fields(s) {
				if !known[w] {
					t.Fatalf("lorem(%q, %d) ends in a cut word %q: %q", seed, n, w, s)
				}
			}
		}
	}
}

// recovery is the input of a retried turn: the user's request, what the
// failed answer said, then the internal recovery prompt (the composer
// marks it Internal).
func recovery(request, said string) []model.InputMessage {
	return []model.InputMessage{
		userMsg(request),
		{Role: model.RoleAssistant, Content: []model.InputContent{{Type: model.ContentText, Text: said}}},
		{Role: model.RoleUser, Internal: true, Content: []model.InputContent{{Type: model.ContentText,
			Text: "The previous answer was interrupted (model_error: boom) after: \"" + said + "\". Continue from where it stopped."}}},
	}
}

func playReq(t *testing.T, req model.Request) (string, []model.Event, error) {
	t.Helper()
	var evs []model.Event
	req.Step = 1
	err := Scripted{}.Stream(context.Background(), req, func(ev model.Event) error {
		evs = append(evs, ev)
		return nil
	})
	return textOf(evs, model.EvTextDelta), evs, err
}

// TestRetryReplaysTheScenario: a retry's recovery prompt is not what the
// user said: a retry's run (Attempt 1 after one failed answer) replays the
// request's scenario as the next take, the same text a regeneration plays;
// a first answer reads an internal entry as any other.
func TestRetryReplaysTheScenario(t *testing.T) {
	t.Parallel()
	for _, request := range []string{"scenario:text chars=80", "hello there", "scenario:markdown"} {
		got, _, err := playReq(t, model.Request{Messages: recovery(request, "lorem ipsum"), Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		regen, _, _ := playReq(t, model.Request{Messages: []model.InputMessage{userMsg(request)}, Attempt: 1})
		if !strings.HasPrefix(got, "(Take 2) ") || strings.Contains(got, "interrupted") || got != regen {
			t.Fatalf("%q retried: %.80q; regenerated: %.80q", request, got, regen)
		}
	}
	// Two retries: the third take.
	msgs := append(recovery("scenario:text chars=40", "a"), recovery("", "b")[1:]...)
	if got, _, _ := playReq(t, model.Request{Messages: msgs, Attempt: 2}); !strings.HasPrefix(got, "(Take 3) ") {
		t.Fatalf("second retry: %q", got)
	}
	// An app's internal message, read by a first answer: answered.
	internal := userMsg("scenario:text chars=42")
	internal.Internal = true
	if got, _, _ := playReq(t, model.Request{Messages: []model.InputMessage{userMsg("hi"), internal}}); utf8.RuneCountInString(got) != 42 {
		t.Fatalf("an internal message: %q", got)
	}
}

// TestErrorScenarioFailsItsFirstTakes: scenario:error is a transient
// failure: it fails mid-stream on its first take (fails=K: its first K),
// and a retry of it answers in full.
func TestErrorScenarioFailsItsFirstTakes(t *testing.T) {
	t.Parallel()
	if _, _, err := playReq(t, model.Request{Messages: []model.InputMessage{userMsg("scenario:error chars=60")}}); !errors.Is(err, ErrScripted) {
		t.Fatalf("first take: %v", err)
	}
	got, evs, err := playReq(t, model.Request{Messages: recovery("scenario:error chars=60", "lorem"), Attempt: 1})
	if err != nil || utf8.RuneCountInString(got) != len("(Take 2) ")+60 || evs[len(evs)-1].FinishReason != model.FinishStop {
		t.Fatalf("retried: %q, %v", got, err)
	}
	if _, _, err := playReq(t, model.Request{Messages: recovery("scenario:error chars=60 fails=2", "lorem"), Attempt: 1}); !errors.Is(err, ErrScripted) {
		t.Fatalf("fails=2, second take: %v", err)
	}
}

// TestUsageScenario: a text, then the usage data part a real provider's
// step ends with.
func TestUsageScenario(t *testing.T) {
	t.Parallel()
	text, evs, err := playReq(t, model.Request{Messages: []model.InputMessage{userMsg("scenario:usage chars=50")}})
	if err != nil || utf8.RuneCountInString(text) != 50 {
		t.Fatalf("text %q, %v", text, err)
	}
	var usage map[string]any
	for _, ev := range evs {
		if ev.Type == model.EvData && ev.DataType == model.DataUsage {
			usage, _ = ev.Data.(map[string]any)
		}
	}
	if usage["model"] != "scripted" || usage["input_tokens"].(int64) <= 0 || usage["output_tokens"].(int64) <= 0 {
		t.Fatalf("usage %v", usage)
	}
}

// TestMarkdownSampleShowsWhatIsSanitized: the raw HTML follows its own
// description, so removing it leaves no empty gap in a sentence.
func TestMarkdownSampleShowsWhatIsSanitized(t *testing.T) {
	t.Parallel()
	stripped := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(markdownSample, "")
	if strings.Contains(stripped, "  ") || !strings.Contains(markdownSample, "`<script>`") || !strings.Contains(markdownSample, "<script>window.__pwned") {
		t.Fatalf("sample without its HTML: %q", stripped)
	}
}
