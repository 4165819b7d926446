package session

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

func retryAction() Action { return Action{ActionType: ActionRetry} }

// A failed turn is run again into a new agent message of the same turn,
// after an internal recovery prompt quoting what was said.
func TestRetryAfterModelError(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:error chars=40")
	d.converge()
	failed := e.lastAgent(sid)
	ep := partsOf(failed, synccore.PartError)[0]
	if ep.Code != CodeModelError || !ep.Recoverable {
		t.Fatalf("error part %+v", ep)
	}

	prompt, err := e.m.Action(e.ctx, sid, retryAction())
	if err != nil {
		t.Fatal(err)
	}
	said := textOf(failed, synccore.PartText)
	if prompt.Visibility != synccore.VisibilityInternal || prompt.TurnID != failed.TurnID ||
		!strings.Contains(textOf(prompt, synccore.PartText), said) {
		t.Fatalf("recovery prompt %+v (the answer had said %q)", prompt, said)
	}
	d.converge()
	h := e.history(sid)
	answer := h[len(h)-1]
	if len(h) != 4 || answer.MessageID == failed.MessageID || answer.TurnID != failed.TurnID ||
		answer.State != synccore.MessageDone || len(partsOf(answer, synccore.PartError)) != 0 {
		t.Fatalf("after retry: %+v", h)
	}
	// The failed message stayed as it was.
	if h[1].Revision != failed.Revision {
		t.Fatal("the failed message changed")
	}
	// The scripted model read the prompt as a retry: it replayed the
	// scenario as its next take (which answers in full), not the prompt.
	if got := textOf(answer, synccore.PartText); !strings.HasPrefix(got, "(Take 2) ") || strings.Contains(got, "interrupted") {
		t.Fatalf("answer %q", textOf(answer, synccore.PartText))
	}
}

func TestRetryRefusals(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	_, err := e.m.Action(e.ctx, sid, retryAction())
	wantCode(t, err, synccore.CodeConflict) // an empty session

	e.post(sid, "hello")
	e.waitIdle()
	_, err = e.m.Action(e.ctx, sid, retryAction())
	wantCode(t, err, synccore.CodeConflict) // a turn that ended well

	d := e.driver(sid)
	e.post(sid, "scenario:approval")
	awaitPending(t, d)
	_, err = e.m.Action(e.ctx, sid, retryAction())
	wantCode(t, err, synccore.CodeConflict) // a turn is running

	// Stopped: retryable, even after a setting changed.
	if _, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionStop}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetApprovalMode, Value: ApprovalAuto}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Action(e.ctx, sid, retryAction()); err != nil {
		t.Fatalf("retry of a stopped turn: %v", err)
	}
	awaitPending(t, d) // the scenario runs again and asks again
}

func TestActionTypesListRetry(t *testing.T) {
	if !slices.Contains(ActionTypes(), ActionRetry) || len(ActionTypes()) != 4 {
		t.Fatalf("action types %v", ActionTypes())
	}
	e := newEnv(t, Config{})
	_, err := e.m.Action(e.ctx, e.session(""), Action{ActionType: "rewind"})
	wantCode(t, err, synccore.CodeBadRequest)
	if !strings.Contains(err.Error(), "retry") {
		t.Fatalf("error %q does not list the known types", err)
	}
}

// A message sent while the turn waits on an approval, then the turn is
// stopped: no step read it, so it starts the next turn and is answered.
func TestQueuedSteerIsAnsweredAfterStop(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:approval")
	awaitPending(t, d)
	steer := e.post(sid, "are you still there?")
	if _, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionStop}); err != nil {
		t.Fatal(err)
	}
	d.converge()
	h := e.history(sid)
	answer := h[len(h)-1]
	if answer.Role != synccore.RoleAgent || answer.Sequence <= steer.Sequence || answer.State != synccore.MessageDone ||
		!strings.Contains(textOf(answer, synccore.PartText), "are you still there?") {
		t.Fatalf("the steer was not answered: last message %+v", answer)
	}
}
