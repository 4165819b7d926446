package session

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// unreachable is a provider whose first calls fail before it says anything,
// as a model behind a wrong base URL does; then it answers as the scripted
// model. Its context budget is tiny, so every turn after the first asks it
// for a summary of the history first, and that fails too.
type unreachable struct {
	failures atomic.Int32 // calls left that fail
}

func (u *unreachable) ContextBudget() int { return 1 }

func (u *unreachable) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	if u.failures.Add(-1) >= 0 {
		return &model.Error{Provider: "openai", Recoverable: true, Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	}
	return model.Scripted{}.Stream(ctx, req, emit)
}

// A turn that fails before its agent message exists still answers its user
// message: an agent message closed with a recoverable turn error, which a
// retry acts on; the session is not wedged (issue 26).
func TestTurnFailingBeforeItSaysAnything(t *testing.T) {
	u := &unreachable{}
	u.failures.Store(3)
	e := newEnv(t, Config{Models: model.Registry{model.DefaultName: u}})
	sid := e.session("")
	e.post(sid, "hello")
	e.waitIdle()
	h := e.history(sid)
	if len(h) != 2 {
		t.Fatalf("after a turn whose model is unreachable: %d messages, want the user's and an agent message", len(h))
	}
	failed := h[1]
	eps := partsOf(failed, synccore.PartError)
	if failed.Role != synccore.RoleAgent || failed.State != synccore.MessageDone || len(failed.Parts) != 1 || len(eps) != 1 {
		t.Fatalf("the turn's answer: %+v", failed)
	}
	if ep := eps[0]; ep.Code != CodeModelError || ep.Scope != synccore.ErrorScopeTurn || !ep.Recoverable || ep.Message == "" || ep.PartID == "" {
		t.Fatalf("error part %+v", ep)
	}

	// A later post fails before its agent message exists (the composer
	// cannot summarise: the model is unreachable), visibly all the same,
	// and again.
	for _, text := range []string{"again", "and again"} {
		user := e.post(sid, text)
		e.waitIdle()
		last := e.lastAgent(sid)
		if eps := partsOf(last, synccore.PartError); last.Sequence != user.Sequence+1 || len(eps) != 1 || !eps[0].Recoverable {
			t.Fatalf("the turn whose composer failed: %+v", last)
		}
	}

	// The model is reachable again: retry answers.
	if _, err := e.m.Action(e.ctx, sid, retryAction()); err != nil {
		t.Fatalf("retry after a turn that said nothing: %v", err)
	}
	e.waitIdle()
	answer := e.lastAgent(sid)
	if answer.State != synccore.MessageDone || len(partsOf(answer, synccore.PartError)) != 0 || textOf(answer, synccore.PartText) == "" {
		t.Fatalf("after retry: %+v", answer)
	}
}
