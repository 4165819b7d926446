package session

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// Answer resolves a pending interaction: the interaction and its tool
// change in one transaction (approved: running; denied: output-denied;
// question: output-available with the answer), and the suspended turn goes
// on. CodeNotPending if the interaction is not pending (nothing changes),
// CodeNotFound if the session has no such interaction.
func (m *Manager) Answer(ctx context.Context, sessionID, interactionID string, response any) (synccore.Message, error) {
	return serveMessage(ctx, m, sessionID, func(s *live) (synccore.Message, error) {
		s.mu.Lock()
		defer s.mu.Unlock()

		t := s.turn
		var w *workPart
		if t != nil && t.agent != nil && !t.agent.closed() {
			w = t.agent.interaction(interactionID)
		}
		if w == nil {
			return synccore.Message{}, s.notPending(ctx, interactionID)
		}
		if w.p.Status != synccore.InteractionPending || t.waiting != interactionID || t.ctx.Err() != nil {
			return synccore.Message{}, synccore.Errorf(synccore.CodeNotPending, "interaction %q is %s", interactionID, w.p.Status)
		}
		callID := model.Field(w.p.Request, "tool_call_id")
		tool := t.agent.tool(callID)
		if tool == nil {
			return synccore.Message{}, synccore.Errorf(synccore.CodeInternal, "interaction %q gates an unknown tool %q", interactionID, callID)
		}

		// Keep the parts as they are so a failed commit changes nothing.
		savedI, savedT := w.p, tool.p
		var approved bool
		switch kind := model.Field(w.p.Request, "kind"); kind {
		case KindApproval:
			ok, valid := approval(response)
			if !valid {
				return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, `an approval's response is {"approved": true|false}`)
			}
			approved = ok
			w.p.Response = map[string]any{"approved": ok}
			if ok {
				tool.p.State = synccore.ToolRunning
			} else {
				tool.p.State = synccore.ToolOutputDenied
				tool.p.Output = map[string]any{"denied": true, "reason": "the user denied this call"}
			}
		case KindQuestion:
			text, valid := answerText(response)
			if !valid {
				return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, `a question's response is {"answer": string}`)
			}
			w.p.Response = map[string]any{"answer": text}
			tool.p.State = synccore.ToolOutputAvailable
			tool.p.Output = map[string]any{"answer": text}
		default:
			return synccore.Message{}, synccore.Errorf(synccore.CodeInternal, "interaction %q has unknown kind %q", interactionID, kind)
		}
		w.p.Status = synccore.InteractionResolved
		w.dirty, tool.dirty = true, true

		msg, err := s.commitAgent(ctx, t.agent, synccore.MessageStreaming)
		if err != nil {
			w.p, tool.p = savedI, savedT
			return synccore.Message{}, err
		}
		t.waiting = ""
		// The turn waits on one interaction at a time, so the buffer of one is
		// free; never block under the lock even if it were not.
		select {
		case t.answers <- approved:
		default:
			s.log.Error("answer dropped: the turn was not waiting", "interaction_id", interactionID)
		}
		return *msg, nil
	})
}

// notPending tells an interaction outside the running turn apart: one the
// session has (answered, cancelled, or left in a closed message) is
// CodeNotPending; anything else is CodeNotFound.
func (s *live) notPending(ctx context.Context, interactionID string) error {
	hist, err := s.m.store.History(ctx, s.id)
	if err != nil {
		return fmt.Errorf("session %s: look up interaction: %w", s.id, err)
	}
	for _, msg := range hist {
		for _, p := range msg.Parts {
			if p.Type == synccore.PartInteraction && p.InteractionID == interactionID {
				return synccore.Errorf(synccore.CodeNotPending, "interaction %q is %s", interactionID, p.Status)
			}
		}
	}
	return synccore.Errorf(synccore.CodeNotFound, "session %s has no interaction %q", s.id, interactionID)
}

func approval(response any) (approved, ok bool) {
	switch r := response.(type) {
	case bool:
		return r, true
	case map[string]any:
		b, ok := r["approved"].(bool)
		return b, ok
	}
	return false, false
}

func answerText(response any) (string, bool) {
	switch r := response.(type) {
	case string:
		return r, true
	case map[string]any:
		s, ok := r["answer"].(string)
		return s, ok
	}
	return "", false
}
