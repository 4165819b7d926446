package session

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
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
	return scripted.Scripted{}.Stream(ctx, req, emit)
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

// slowComposer is a provider whose n-th call (the summary the composer asks
// for before the second turn's agent message exists) waits for the test.
type slowComposer struct {
	calls   atomic.Int32
	hold    int32
	waiting chan struct{}
	release chan struct{}
}

func (p *slowComposer) ContextBudget() int { return 1 }

func (p *slowComposer) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	if p.calls.Add(1) == p.hold {
		close(p.waiting)
		select {
		case <-p.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return scripted.Scripted{}.Stream(ctx, req, emit)
}

// The placement rule's middle branch: an action sent while the target turn
// runs but has no agent message yet becomes an agent message of that turn
// holding only the action; the turn's own message follows it.
func TestActionBeforeTheTurnsAgentMessage(t *testing.T) {
	p := &slowComposer{hold: 2, waiting: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, Config{Models: model.Registry{model.DefaultName: p, "other": scripted.Scripted{}}})
	sid := e.session("")
	e.post(sid, "hello")
	e.waitIdle()
	user := e.post(sid, "again")
	<-p.waiting // the second turn is composing: no agent message yet
	got, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetModel, Value: "other"})
	if err != nil {
		t.Fatal(err)
	}
	close(p.release)
	e.waitIdle()
	if got.Role != synccore.RoleAgent || got.State != synccore.MessageDone || got.TurnID != user.TurnID ||
		len(got.Parts) != 1 || got.Parts[0].Type != synccore.PartAction || got.Sequence != user.Sequence+1 {
		t.Fatalf("the action's message: %+v (the turn's user message: %+v)", got, user)
	}
	answer := e.lastAgent(sid)
	if answer.Sequence != got.Sequence+1 || answer.TurnID != user.TurnID || len(partsOf(answer, synccore.PartAction)) != 0 ||
		textOf(answer, synccore.PartText) == "" {
		t.Fatalf("the turn's answer after the action: %+v", answer)
	}
}
