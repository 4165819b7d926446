package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentsync/agentsync/server/model"
)

// Scripted is the deterministic scripted model: the last user text picks a
// scenario (`scenario:NAME key=value...`, see Scenarios); anything else gets
// an echo reply. Like a real model it is stateless: which step of a
// scenario it plays is read from the input (the tool results that follow
// the last user message).
type Scripted struct {
	// Budget is the context budget the composer uses for it (estimated
	// tokens); 0 = model.DefaultBudget.
	Budget int
}

// ErrScripted is the failure the error scenario plays.
var ErrScripted = errors.New("scripted model failure (scenario:error)")

// Stream plays one step.
func (Scripted) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	if req.Purpose == model.PurposeSummary {
		return play(ctx, emit, textBlock("t", scriptedSummary(req.Messages), 64), finish(model.FinishStop))
	}
	// Another version of a turn's answer (a regeneration, or a retry after
	// its recovery prompt: req.Attempt > 0) plays the same scenario with a
	// visible difference: another seed for its text, and a "Take n" line
	// first. It reads what the user asked past the internal entries (a
	// recovery prompt is not answered as if the user had said it); a first
	// answer reads an internal entry as any other (an app's message).
	attempt := req.Attempt
	userText, results := lastUser(req.Messages, attempt > 0)
	sc, ok := parseScenario(userText)
	if !ok {
		return play(ctx, emit, textBlock("t", take(attempt)+echo(userText, attemptSeed(userText, attempt)), 6), finish(model.FinishStop))
	}
	if attempt > 0 {
		userText = attemptSeed(userText, attempt)
		inner := emit
		first := true
		emit = func(ev model.Event) error {
			if first && ev.Type == model.EvTextDelta {
				first = false
				ev.Delta = take(attempt) + ev.Delta
			}
			return inner(ev)
		}
	}
	switch sc.Name {
	case "help":
		return play(ctx, emit, textBlock("t", helpText(), 12), finish(model.FinishStop))
	case "text":
		return play(ctx, emit, textBlock("t", lorem(userText, sc.Int("chars", 400, 1, 1_000_000)), sc.Int("delta", 6, 1, 1_000_000)), finish(model.FinishStop))
	case "markdown":
		return play(ctx, emit, textBlock("t", markdownSample, sc.Int("delta", 6, 1, 1_000_000)), finish(model.FinishStop))
	case "long":
		return play(ctx, emit, textBlock("t", lorem(userText, sc.Int("chars", 100_000, 1, 20_000_000)), sc.Int("delta", 16, 1, 1_000_000)), finish(model.FinishStop))
	case "reasoning":
		delta := sc.Int("delta", 6, 1, 1_000_000)
		return play(ctx, emit,
			reasoningBlock("r", "The user wants a demo of reasoning. "+lorem("why"+userText, 160), delta),
			textBlock("t", lorem(userText, sc.Int("chars", 400, 1, 1_000_000)), delta),
			finish(model.FinishStop))
	case "error":
		n := sc.Int("chars", 200, 2, 1_000_000)
		text := lorem(userText, n)
		if attempt >= sc.Int("fails", 1, 0, 1_000_000) {
			// A transient failure: the takes after the failing ones answer.
			return play(ctx, emit, textBlock("t", text, 6), finish(model.FinishStop))
		}
		half := text[:len(text)/2]
		for !utf8.ValidString(half) {
			half = half[:len(half)-1]
		}
		// Fail halfway through the block: no text-end, no finish.
		err := play(ctx, emit, events(model.Event{Type: model.EvTextStart, BlockID: "t"}),
			func(ctx context.Context, emit func(model.Event) error) error {
				return deltas(ctx, emit, model.EvTextDelta, "t", half, 6)
			})
		if err != nil {
			return err
		}
		return ErrScripted
	case "data":
		return play(ctx, emit, textBlock("t", "Here is a small chart of demo data.", 6),
			events(model.Event{Type: model.EvData, DataType: "chart", DataID: "chart-1", Data: map[string]any{
				"kind": "bar", "labels": []any{"a", "b", "c"}, "values": []any{int64(3), int64(5), int64(2)},
			}}), finish(model.FinishStop))
	case "usage":
		// What a real provider's step ends with (model.DataUsage).
		text := lorem(userText, sc.Int("chars", 120, 1, 1_000_000))
		return play(ctx, emit, textBlock("t", text, 6),
			events(model.Event{Type: model.EvData, DataType: model.DataUsage, Data: map[string]any{
				"model": "scripted", "input_tokens": int64(len(userText)/4 + 12), "output_tokens": int64(len(text)/4 + 1),
			}}), finish(model.FinishStop))
	case "file":
		return play(ctx, emit, textBlock("t", "Here is a file I made.", 6),
			events(model.Event{Type: model.EvFile, URL: "data:text/plain;base64,aGVsbG8gZnJvbSB0aGUgc2NyaXB0ZWQgbW9kZWwK",
				MediaType: "text/plain", Filename: "hello.txt"}), finish(model.FinishStop))
	case "write":
		return writeScenario(ctx, emit, req, sc, results)
	case "files":
		return play(ctx, emit, textBlock("t", filesSeen(req.Messages), 12), finish(model.FinishStop))
	case "tools":
		return toolsScenario(ctx, emit, req, sc, results)
	case "approval":
		return approvalScenario(ctx, emit, req, sc, results)
	case "question":
		return questionScenario(ctx, emit, req, results)
	}
	return play(ctx, emit, textBlock("t", fmt.Sprintf("Unknown scenario %q.\n\n%s", sc.Name, helpText()), 12), finish(model.FinishStop))
}

func toolsScenario(ctx context.Context, emit func(model.Event) error, req model.Request, sc Scenario, results []model.InputContent) error {
	city := sc.Str("city", "Paris")
	switch len(results) {
	case 0:
		return play(ctx, emit, textBlock("t", "Let me look up the weather in "+city+".", 6),
			toolCall(callID(req, 1), ToolWeather, map[string]any{"city": city}), finish(model.FinishToolCalls))
	case 1:
		temp := fmt.Sprint(outputField(results[0].Output, "temperature_c"))
		return play(ctx, emit, textBlock("t", "It is "+temp+" °C. Let me convert that to Fahrenheit.", 6),
			toolCall(callID(req, 1), ToolCalculator, map[string]any{"expression": temp + "*9/5+32"}), finish(model.FinishToolCalls))
	default:
		w, c := results[len(results)-2], results[len(results)-1]
		return play(ctx, emit, textBlock("t", fmt.Sprintf("In %s it is %v °C (%v °F) and %v.",
			city, outputField(w.Output, "temperature_c"), outputField(c.Output, "result"), outputField(w.Output, "conditions")), 6),
			finish(model.FinishStop))
	}
}

func approvalScenario(ctx context.Context, emit func(model.Event) error, req model.Request, sc Scenario, results []model.InputContent) error {
	if len(results) == 0 {
		return play(ctx, emit, textBlock("t", "I will send the report by email; please approve.", 6),
			toolCall(callID(req, 1), ToolSendEmail, map[string]any{"to": sc.Str("to", "team@example.com"), "subject": "Weekly report"}),
			finish(model.FinishToolCalls))
	}
	r := results[len(results)-1]
	msg := fmt.Sprintf("Done: the email was sent (%v).", outputField(r.Output, "id"))
	switch r.ToolState {
	case "output-denied":
		msg = "Understood: I did not send the email."
	case "output-error":
		msg = fmt.Sprintf("Sending failed: %v.", r.Output)
	}
	return play(ctx, emit, textBlock("t", msg, 6), finish(model.FinishStop))
}

func questionScenario(ctx context.Context, emit func(model.Event) error, req model.Request, results []model.InputContent) error {
	if len(results) == 0 {
		return play(ctx, emit, textBlock("t", "I have a question first.", 6),
			toolCall(callID(req, 1), ToolAskUser, map[string]any{"question": "Which colour do you prefer?"}),
			finish(model.FinishToolCalls))
	}
	r := results[len(results)-1]
	if r.IsError {
		return play(ctx, emit, textBlock("t", "No answer, so I will stop here.", 6), finish(model.FinishStop))
	}
	return play(ctx, emit, textBlock("t", fmt.Sprintf("You answered %q. Good choice!", fmt.Sprint(outputField(r.Output, "answer"))), 6),
		finish(model.FinishStop))
}

// lastUser returns the text of the last user entry, past internal ones
// when skipInternal (what the user asked, not a recovery prompt), and the
// tool results that follow it (the steps of the current scenario so far).
func lastUser(msgs []model.InputMessage, skipInternal bool) (string, []model.InputContent) {
	for _, skip := range []bool{skipInternal, false} {
		if text, results, ok := findUser(msgs, skip); ok {
			return text, results
		}
	}
	return "", nil
}

func findUser(msgs []model.InputMessage, skipInternal bool) (string, []model.InputContent, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleUser || skipInternal && msgs[i].Internal {
			continue
		}
		var b strings.Builder
		for _, c := range msgs[i].Content {
			if c.Type == model.ContentText && c.Filename == "" { // not a file's text
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(c.Text)
			}
		}
		var results []model.InputContent
		for _, m := range msgs[i+1:] {
			for _, c := range m.Content {
				if c.Type == model.ContentToolResult {
					results = append(results, c)
				}
			}
		}
		return b.String(), results, true
	}
	return "", nil, false
}

func outputField(out any, key string) any {
	if m, ok := out.(map[string]any); ok {
		return m[key]
	}
	return nil
}

// callID is unique within the turn's agent message: step and index.
func callID(req model.Request, n int) string { return fmt.Sprintf("call-%d-%d", req.Step, n) }

// take is the line a regenerated answer starts with ("" for a first one).
func take(attempt int) string {
	if attempt <= 0 {
		return ""
	}
	return fmt.Sprintf("(Take %d) ", attempt+1)
}

// attemptSeed varies the seed of a regenerated answer's text.
func attemptSeed(userText string, attempt int) string {
	if attempt <= 0 {
		return userText
	}
	return fmt.Sprintf("%s\x00take%d", userText, attempt)
}

// echo answers a message that names no scenario; seed picks its lorem.
func echo(userText, seed string) string {
	if strings.TrimSpace(userText) == "" {
		return "Hello! Send `scenario:help` to see what I can play. " + lorem("hello"+strings.TrimPrefix(seed, userText), 60)
	}
	return "You said: “" + userText + "”. " + lorem(seed, 160)
}

func helpText() string {
	var b strings.Builder
	b.WriteString("Scenarios (send `scenario:NAME key=value...`):\n")
	for _, s := range Scenarios {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Help)
	}
	return b.String()
}

// A script is one piece of a step; scripts are emitted lazily so a very long
// answer never exists as a list of events.
type script func(ctx context.Context, emit func(model.Event) error) error

func events(evs ...model.Event) script {
	return func(ctx context.Context, emit func(model.Event) error) error {
		for _, ev := range evs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := emit(ev); err != nil {
				return err
			}
		}
		return nil
	}
}

func textBlock(id, text string, delta int) script {
	return block(model.EvTextStart, model.EvTextDelta, model.EvTextEnd, id, text, delta)
}

func reasoningBlock(id, text string, delta int) script {
	return block(model.EvReasoningStart, model.EvReasoningDelta, model.EvReasoningEnd, id, text, delta)
}

func block(start, deltaType, end, id, text string, delta int) script {
	return func(ctx context.Context, emit func(model.Event) error) error {
		if err := emit(model.Event{Type: start, BlockID: id}); err != nil {
			return err
		}
		if err := deltas(ctx, emit, deltaType, id, text, delta); err != nil {
			return err
		}
		return emit(model.Event{Type: end, BlockID: id})
	}
}

// deltas emits text in pieces of delta runes.
func deltas(ctx context.Context, emit func(model.Event) error, deltaType, id, text string, delta int) error {
	for len(text) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := chunkLen(text, delta)
		if err := emit(model.Event{Type: deltaType, BlockID: id, Delta: text[:n]}); err != nil {
			return err
		}
		text = text[n:]
	}
	return nil
}

func toolCall(id, name string, input any) script {
	return events(
		model.Event{Type: model.EvToolInputStart, ToolCallID: id, ToolName: name},
		model.Event{Type: model.EvToolCall, ToolCallID: id, ToolName: name, Input: input},
	)
}

func finish(reason string) script {
	return events(model.Event{Type: model.EvFinish, FinishReason: reason})
}

// play runs the scripts in order, stopping at the first error.
func play(ctx context.Context, emit func(model.Event) error, scripts ...script) error {
	for _, sc := range scripts {
		if err := sc(ctx, emit); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// scriptedSummary is the scripted model's deterministic summary: the
// user's texts, each clipped, the newest dozen (the last entry, the
// request itself, left out).
func scriptedSummary(in []model.InputMessage) string {
	var items []string
	for _, m := range in[:max(len(in)-1, 0)] {
		if m.Role != model.RoleUser {
			continue
		}
		for _, c := range m.Content {
			if c.Type == model.ContentText {
				items = append(items, clip(c.Text, 80))
			}
		}
	}
	if len(items) > 12 {
		items = items[len(items)-12:]
	}
	return "The user said: " + strings.Join(items, " | ")
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// Name is the scripted model's name in a registry: model.DefaultName, the
// model of a session created without one.
const Name = model.DefaultName

// Registry is a registry holding only the scripted model, under Name:
// what a server without Config.Models offers.
func Registry() model.Registry { return model.Registry{Name: Scripted{}} }

// ContextBudget implements model.Budgeter.
func (s Scripted) ContextBudget() int { return s.Budget }
