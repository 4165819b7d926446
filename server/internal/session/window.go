package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentsync/agentsync/server/internal/composer"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// The composer policy: a step's model input is the session's newest
// messages that fit the model's context budget, after a summary standing
// for everything older. The summary is derived data in its own table
// (store.Summary), made by the session's model when the recent messages no
// longer fit and reused until then; the history itself never changes.
// A step reads the summary and the messages after it, newest first, a
// chunk at a time, and stops once over the budget: O(budget), whatever the
// session's length.

// windowChunk is how many messages one read of the recent end takes.
const windowChunk = 32

// window is what one step of the model sees.
type window struct {
	input []model.InputMessage
	seen  int64 // the newest user message in it
}

// composeWindow builds the input of the next step for provider (named
// modelName), making a new summary first if the messages since the last
// one no longer fit the budget.
func (s *live) composeWindow(ctx context.Context, t *turn, provider model.Provider, modelName string) (window, error) {
	budget := model.BudgetOf(provider)
	sum, _, err := s.m.store.LatestSummary(ctx, s.id)
	if err != nil {
		return window{}, fmt.Errorf("read summary: %w", err)
	}
	s.mu.Lock()
	head := s.rec.HeadSequence
	s.mu.Unlock()

	tail, fits, err := s.readTail(ctx, sum.ToSequence, head, budget)
	if err != nil {
		return window{}, err
	}
	tail = turnView(tail, t)
	if !fits {
		keep := keepFrom(tail, budget/2)
		if to := tail[keep].Sequence - 1; to > sum.ToSequence {
			if sum, err = s.summarize(ctx, t, provider, modelName, sum, to); err != nil {
				return window{}, err
			}
			tail = tail[keep:]
		}
	}
	return window{
		input: composer.WithSummary(sum.Text, s.filesFor(provider).Attach(ctx, s.id, composer.Compose(tail))),
		seen:  lastUserSequence(tail),
	}, nil
}

// filesFor is how the composer reads files for provider: the server's
// budget, with the provider's own bound on an image.
func (s *live) filesFor(provider model.Provider) composer.Files {
	f := s.m.files
	f.MaxImage = model.MaxImageOf(provider)
	return f
}

// turnView is the history as turn t reads it: without the messages that
// wait for a later turn (queued or interrupting, posted after t began with
// a turn id of their own), and with t's own messages after those of the
// turns before it (a queued message committed before the previous turn's
// agent message still comes after that answer).
func turnView(tail []synccore.Message, t *turn) []synccore.Message {
	out := make([]synccore.Message, 0, len(tail))
	var own []synccore.Message
	for _, m := range tail {
		switch {
		case m.TurnID == t.id:
			own = append(own, m)
		case m.Sequence > t.startSeq && m.Role == synccore.RoleUser:
			// waits for a later turn
		default:
			out = append(out, m)
		}
	}
	return append(out, own...)
}

// readTail reads the messages after floor up to head, newest chunk first,
// until they are over budget. fits: all of them are in, within budget.
func (s *live) readTail(ctx context.Context, floor, head int64, budget int) (tail []synccore.Message, fits bool, err error) {
	tokens := 0
	hi := head
	for hi > floor && tokens <= budget {
		lo := max(floor+1, hi-windowChunk+1)
		chunk, err := s.m.store.Range(ctx, s.id, lo, hi)
		if err != nil {
			return nil, false, fmt.Errorf("read messages %d..%d: %w", lo, hi, err)
		}
		for i := range chunk {
			tokens += composer.Tokens(&chunk[i])
		}
		tail = append(chunk, tail...)
		hi = lo - 1
	}
	return tail, hi <= floor && tokens <= budget, nil
}

// keepFrom is where the kept recent messages start: the oldest user
// message from which the rest fits in keep tokens (so a model's context
// starts with a user turn, and half the budget is left to grow into before
// the next summary); at least the newest user message, the current turn.
func keepFrom(tail []synccore.Message, keep int) int {
	start, lastUser := -1, -1
	tokens := 0
	for i := len(tail) - 1; i >= 0; i-- {
		tokens += composer.Tokens(&tail[i])
		if tail[i].Role != synccore.RoleUser {
			continue
		}
		if lastUser < 0 {
			lastUser = i
		}
		if tokens <= keep {
			start = i
		}
	}
	switch {
	case start >= 0:
		return start
	case lastUser >= 0:
		return lastUser
	}
	return 0
}

// summarize asks the session's model for a summary covering 1..to: the
// previous summary continued with the messages after it. The request is
// not part of any message; stopping the turn cancels it.
func (s *live) summarize(ctx context.Context, t *turn, provider model.Provider, modelName string, prev store.Summary, to int64) (store.Summary, error) {
	older, err := s.m.store.Range(ctx, s.id, prev.ToSequence+1, to)
	if err != nil {
		return store.Summary{}, fmt.Errorf("read messages to summarise: %w", err)
	}
	req := model.Request{
		SessionID: s.id, TurnID: t.id, StepID: "summary", Model: modelName, Purpose: model.PurposeSummary,
		Messages: composer.SummaryRequest(prev.Text, older),
	}
	var text strings.Builder
	err = s.stream(t.ctx, provider, req, func(ev model.Event) error {
		if ev.Type == model.EvTextDelta {
			text.WriteString(ev.Delta)
		}
		return nil
	})
	if err != nil {
		if t.ctx.Err() != nil {
			return store.Summary{}, context.Cause(t.ctx)
		}
		return store.Summary{}, fmt.Errorf("summarise messages %d..%d: %w", prev.ToSequence+1, to, err)
	}
	sum := store.Summary{FromSequence: 1, ToSequence: to, Text: strings.TrimSpace(text.String()), Model: modelName, CreatedAt: s.m.now()}
	if err := s.m.store.PutSummary(ctx, s.id, sum); err != nil {
		return store.Summary{}, fmt.Errorf("store summary: %w", err)
	}
	s.log.Info("summarised older turns", "to_sequence", to, "model", modelName, "chars", len(sum.Text))
	return sum, nil
}
