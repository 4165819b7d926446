package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/server/internal/composer"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// recorder is the scripted model with a small budget, keeping every
// request it gets.
type recorder struct {
	scripted.Scripted
	mu   sync.Mutex
	reqs []model.Request
}

func (r *recorder) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Scripted.Stream(ctx, req, emit)
}

func (r *recorder) requests(purpose string) []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []model.Request
	for _, q := range r.reqs {
		if q.Purpose == purpose {
			out = append(out, q)
		}
	}
	return out
}

func inputTokens(in []model.InputMessage) int {
	n := 0
	for _, m := range in {
		for _, c := range m.Content {
			n += len(c.Text)/composer.BytesPerToken + 4
		}
	}
	return n
}

func inputText(in []model.InputMessage) string {
	var b strings.Builder
	for _, m := range in {
		for _, c := range m.Content {
			b.WriteString(c.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// A history far over the budget: the model gets a summary and the recent
// turns only, the summary lives in its own table and is reused until the
// recent turns outgrow the budget, and messages() is unchanged.
func TestSummaryKeepsTheContextInBudget(t *testing.T) {
	const budget = 1000
	rec := &recorder{Scripted: scripted.Scripted{Budget: budget}}
	e := newEnv(t, Config{Models: model.Registry{model.DefaultName: rec}})
	sid := e.session("")
	const turns = 40
	for i := range turns {
		// ~100 tokens a user message, the echo about as much again.
		e.post(sid, fmt.Sprintf("message %02d %s", i, strings.Repeat("word ", 80)))
		e.waitIdle()
	}

	steps := rec.requests("")
	last := steps[len(steps)-1]
	if last.Messages[0].Role != model.RoleSystem || !strings.HasPrefix(last.Messages[0].Content[0].Text, composer.SummaryPrefix) {
		t.Fatalf("the last step's input does not open with a summary: %+v", last.Messages[0])
	}
	text := inputText(last.Messages)
	if strings.Contains(text, "message 00 ") || !strings.Contains(text, fmt.Sprintf("message %02d ", turns-1)) {
		t.Fatal("the last step's input should hold the newest turn and not the oldest")
	}
	if n := inputTokens(last.Messages); n > budget {
		t.Fatalf("the last step's input is %d tokens, over the budget of %d", n, budget)
	}
	for _, q := range steps {
		if n := inputTokens(q.Messages); n > budget {
			t.Fatalf("a step's input is %d tokens, over the budget of %d", n, budget)
		}
	}
	// Summaries are made now and then, not every step.
	sums := rec.requests(model.PurposeSummary)
	if len(sums) == 0 || len(sums) > turns/3 {
		t.Fatalf("%d summaries for %d turns", len(sums), turns)
	}

	sum, ok, err := e.st.LatestSummary(e.ctx, sid)
	if err != nil || !ok {
		t.Fatalf("no stored summary: %v", err)
	}
	if sum.Model != model.DefaultName || sum.FromSequence != 1 || sum.ToSequence < 2 || !strings.Contains(last.Messages[0].Content[0].Text, sum.Text) {
		t.Fatalf("stored summary %+v", sum)
	}
	// The history is untouched: every message is there, none is a summary.
	page, err := e.m.Messages(e.ctx, sid, storeQuery(200, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 2*turns || page.Total != 2*turns {
		t.Fatalf("messages(): %d items, total %d", len(page.Items), page.Total)
	}
	for _, m := range page.Items {
		if strings.Contains(textOf(m, synccore.PartText), "The user said:") && m.Role == synccore.RoleUser {
			t.Fatal("a summary leaked into messages()")
		}
	}
}
