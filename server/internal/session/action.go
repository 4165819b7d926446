package session

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/synccore"
)

// Action runs a session operation and returns the message holding its
// action part. Placement: while the target turn's agent message streams,
// the part is appended to it; otherwise it gets an agent message of its own.
func (m *Manager) Action(ctx context.Context, sessionID string, a Action) (synccore.Message, error) {
	return serveMessage(ctx, m, sessionID, func(s *live) (synccore.Message, error) {
		for _, h := range actionHandlers {
			if h.actionType == a.ActionType {
				return h.run(ctx, s, a)
			}
		}
		return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, "unknown action_type %q (known: %v)", a.ActionType, ActionTypes())
	})
}

// actionHandlers is the one list of the action types the server accepts:
// Action dispatches on it and ActionTypes (shown to clients as a
// session's "actions") is read from it.
var actionHandlers = []struct {
	actionType string
	run        func(ctx context.Context, s *live, a Action) (synccore.Message, error)
}{
	{ActionStop, func(ctx context.Context, s *live, _ Action) (synccore.Message, error) { return s.stop(ctx) }},
	{ActionSetModel, func(ctx context.Context, s *live, a Action) (synccore.Message, error) {
		if _, ok := s.m.models[a.Value]; !ok {
			return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, "unknown model %q (known: %v)", a.Value, s.m.models.Names())
		}
		return s.setting(ctx, a, "Model set to "+a.Value)
	}},
	{ActionSetApprovalMode, func(ctx context.Context, s *live, a Action) (synccore.Message, error) {
		if a.Value != ApprovalAsk && a.Value != ApprovalAuto {
			return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, "approval mode is %q or %q, got %q", ApprovalAsk, ApprovalAuto, a.Value)
		}
		return s.setting(ctx, a, "Approval mode set to "+a.Value)
	}},
	{ActionRetry, func(ctx context.Context, s *live, _ Action) (synccore.Message, error) { return s.retry(ctx) }},
}

// ActionTypes lists the action types Action accepts, in a stable order.
func ActionTypes() []string {
	out := make([]string, len(actionHandlers))
	for i, h := range actionHandlers {
		out[i] = h.actionType
	}
	return out
}

func actionPart(a Action, title string) synccore.Part {
	return synccore.Part{
		Type:       synccore.PartAction,
		ActionID:   newID("act_"),
		ActionType: a.ActionType,
		State:      synccore.ActionCompleted,
		Title:      title,
	}
}

// stop cancels the running turn and waits for its goroutine to close the
// message (with the action part and an error part "stopped").
func (s *live) stop(ctx context.Context) (synccore.Message, error) {
	s.mu.Lock()
	t := s.turn
	if t == nil || t.ctx.Err() != nil {
		s.mu.Unlock()
		return synccore.Message{}, synccore.Errorf(synccore.CodeConflict, "no turn is running")
	}
	t.cancel(&stopCause{action: actionPart(Action{ActionType: ActionStop}, "Stopped")})
	s.mu.Unlock()

	select {
	case <-t.done:
	case <-ctx.Done():
		return synccore.Message{}, fmt.Errorf("session %s: waiting for the turn to stop: %w", s.id, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.final == nil {
		return synccore.Message{}, synccore.Errorf(synccore.CodeInternal, "the stopped turn left no message")
	}
	return *t.final, nil
}

// setting changes the session's model or approval mode; the next model
// step or tool call uses it.
func (s *live) setting(ctx context.Context, a Action, title string) (synccore.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return synccore.Message{}, errStopping
	}
	rec := s.rec
	if a.ActionType == ActionSetModel {
		rec.Model = a.Value
	} else {
		rec.ApprovalMode = a.Value
	}
	rec.UpdatedAt = s.m.now()
	if err := s.m.store.UpdateSession(ctx, rec); err != nil {
		return synccore.Message{}, fmt.Errorf("session %s: %s: %w", s.id, a.ActionType, err)
	}
	s.rec = rec

	part := actionPart(a, title)
	if t := s.turn; t != nil && t.ctx.Err() == nil && t.agent != nil && !t.agent.closed() {
		// The commit also checkpoints what streamed so far: the action
		// part must follow the parts already published, and deltas go on
		// from the committed text. It is pending until the turn's next
		// model step, which runs with it (settleActions).
		part.State = synccore.ActionPending
		t.agent.add(part)
		msg, err := s.commitAgent(ctx, t.agent, synccore.MessageStreaming)
		if err != nil {
			t.agent.parts = t.agent.parts[:len(t.agent.parts)-1]
			return synccore.Message{}, err
		}
		return *msg, nil
	}
	turnID := newID("turn_")
	if t := s.turn; t != nil {
		turnID = t.id
	}
	msg, err := s.commitNew(ctx, singlePartMessage(turnID, part))
	if err != nil {
		return synccore.Message{}, err
	}
	return *msg, nil
}
