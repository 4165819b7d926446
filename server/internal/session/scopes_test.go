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

// Issue 26, point 3: error scopes step and session, action states pending
// -> completed | failed, retry's action part. (The placement of an action
// in a turn that has no agent message yet: failearly_test.go.)

// flaky is the scripted model whose second step of a turn (the step after
// a tool ran) fails once, before it says anything, with an error the
// provider calls retryable.
type flaky struct {
	scripted.Scripted
	failed atomic.Bool
}

func (f *flaky) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	if req.Step == 2 && f.failed.CompareAndSwap(false, true) {
		return &model.Error{Provider: "flaky", Status: 503, Retryable: true, Recoverable: true, Err: errors.New("overloaded")}
	}
	return f.Scripted.Stream(ctx, req, emit)
}

// A tool loop's model step that fails once is run again: the turn survives
// with an error part of scope step, and ends well.
func TestStepErrorScopeForARetriedStep(t *testing.T) {
	e := newEnv(t, Config{Models: model.Registry{model.DefaultName: &flaky{}}})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:tools city=Paris")
	e.waitIdle()
	d.converge()
	agent := e.lastAgent(sid)
	errs := partsOf(agent, synccore.PartError)
	if agent.State != synccore.MessageDone || len(errs) != 1 || errs[0].Scope != synccore.ErrorScopeStep || !errs[0].Recoverable {
		t.Fatalf("agent message %s, errors %+v: want one step error", agent.State, errs)
	}
	if last := agent.Parts[len(agent.Parts)-1]; last.Type != synccore.PartText || last.Text == "" {
		t.Fatalf("the turn did not go on after the failed step: last part %+v", last)
	}
}

// A session whose model the server no longer has fails with scope session.
func TestSessionErrorScopeForAMissingModel(t *testing.T) {
	e := newEnv(t, Config{Models: model.Registry{model.DefaultName: scripted.Scripted{}, "gone": scripted.Scripted{}}})
	sid := e.session("gone")
	// The same store, served by a server without that model.
	_ = e.m.Shutdown(e.ctx)
	m2, err := NewManager(e.ctx, Config{Store: e.st, Logger: quietLogger(), Models: model.Registry{model.DefaultName: scripted.Scripted{}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m2.Shutdown(context.Background()) })
	e.m = m2
	e.post(sid, "hello")
	e.waitIdle()
	agent := e.lastAgent(sid)
	errs := partsOf(agent, synccore.PartError)
	if len(errs) != 1 || errs[0].Scope != synccore.ErrorScopeSession {
		t.Fatalf("errors %+v, want one of scope session", errs)
	}
}

func actionOf(m synccore.Message, typ string) (synccore.Part, bool) {
	for _, p := range m.Parts {
		if p.Type == synccore.PartAction && p.ActionType == typ {
			return p, true
		}
	}
	return synccore.Part{}, false
}

// A model change during a turn is pending in the turn's message until a
// model step runs with it (or the turn closes: it is stored), then
// completed.
func TestMidTurnModelChangeIsPendingThenCompleted(t *testing.T) {
	e := newEnv(t, Config{})
	g := e.gated
	sid := e.session("gated")
	d := e.driver(sid)
	e.post(sid, "go")
	g.awaitBurst(t, 0)
	msg, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetModel, Value: "gated"})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := actionOf(msg, ActionSetModel); !ok || p.State != synccore.ActionPending || msg.State != synccore.MessageStreaming {
		t.Fatalf("mid-turn set_model: %+v in a %s message, want pending", p, msg.State)
	}
	g.releaseStep(t, 0)
	e.waitIdle()
	d.converge()
	if p, _ := actionOf(e.lastAgent(sid), ActionSetModel); p.State != synccore.ActionCompleted {
		t.Fatalf("after the turn: set_model %s, want completed", p.State)
	}
}

// A retry records its action part: it opens the retried run's agent
// message, pending until the run's first step, completed then.
func TestRetryRecordsItsActionPart(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:error chars=40")
	e.waitIdle()
	failed := e.lastAgent(sid)
	if _, err := e.m.Action(e.ctx, sid, retryAction()); err != nil {
		t.Fatal(err)
	}
	e.waitIdle()
	d.converge()
	answer := e.lastAgent(sid)
	p, ok := actionOf(answer, ActionRetry)
	if answer.MessageID == failed.MessageID || !ok || p.Sequence != 1 || p.State != synccore.ActionCompleted || answer.TurnID != failed.TurnID {
		t.Fatalf("the retried answer: %+v (retry action %+v)", summaryOf([]synccore.Message{answer}), p)
	}
	// The view saw it pending first: the client's frames carried both states.
	var sawPending bool
	for _, f := range d.frames {
		if f.Part != nil && f.Part.ActionType == ActionRetry && f.Part.State == synccore.ActionPending ||
			f.Message != nil && func() bool {
				q, ok := actionOf(*f.Message, ActionRetry)
				return ok && q.State == synccore.ActionPending
			}() {
			sawPending = true
		}
	}
	if !sawPending {
		t.Fatal("the retry action was never shown pending")
	}
}
