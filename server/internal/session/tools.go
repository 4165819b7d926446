package session

import (
	"context"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// Interaction kinds (the "kind" of an interaction's request).
const (
	KindApproval = "approval"
	KindQuestion = "question"
)

// runTool runs one tool call of a committed step. Every state change is a
// checkpoint: before the tool runs (running, or suspended on an
// interaction), and after (its output).
func (s *live) runTool(ctx context.Context, t *turn, callID string) error {
	s.mu.Lock()
	a := t.agent
	w := a.tool(callID)
	if w == nil {
		s.mu.Unlock()
		return synccore.Errorf(synccore.CodeInternal, "tool call %q vanished", callID)
	}
	tool := s.m.tools.Get(w.p.ToolName)
	if tool == nil {
		w.p.State = synccore.ToolOutputError
		w.p.Output = map[string]any{"error": "unknown tool " + w.p.ToolName}
		w.dirty = true
		_, err := s.commitAgent(ctx, a, synccore.MessageStreaming)
		s.mu.Unlock()
		return err
	}
	spec := tool.Spec()
	switch {
	case spec.AsksUser:
		// The tool is the question: it runs until the user answers, and
		// the answer (committed by Answer) is its output.
		iid := s.suspend(t, w, synccore.ToolRunning, map[string]any{
			"kind": KindQuestion, "question": model.Field(w.p.Input, "question"), "tool_call_id": callID,
		})
		if _, err := s.commitAgent(ctx, a, synccore.MessageStreaming); err != nil {
			s.mu.Unlock()
			return err
		}
		t.waiting = iid
		s.mu.Unlock()
		_, err := t.waitAnswer()
		return err

	case spec.NeedsApproval || s.rec.ApprovalMode == ApprovalAsk:
		iid := s.suspend(t, w, synccore.ToolAwaitingApproval, map[string]any{
			"kind": KindApproval, "tool_call_id": callID, "tool_name": w.p.ToolName, "input": w.p.Input,
			"reason": approvalReason(spec.NeedsApproval),
		})
		if _, err := s.commitAgent(ctx, a, synccore.MessageStreaming); err != nil {
			s.mu.Unlock()
			return err
		}
		t.waiting = iid
		s.mu.Unlock()
		approved, err := t.waitAnswer()
		if err != nil || !approved {
			return err // a denial was committed by Answer
		}
		// Answer committed the tool as running.

	default:
		w.p.State = synccore.ToolRunning
		w.dirty = true
		_, err := s.commitAgent(ctx, a, synccore.MessageStreaming)
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}

	if err := t.pause(s.m.speed.Tool); err != nil {
		return err
	}
	s.mu.Lock()
	input := w.p.Input
	s.mu.Unlock()
	out, runErr := s.runToolSafely(t.ctx, tool, input)
	if t.ctx.Err() != nil {
		return context.Cause(t.ctx)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if runErr != nil {
		w.p.State = synccore.ToolOutputError
		w.p.Output = map[string]any{"error": runErr.Error()}
	} else {
		w.p.State = synccore.ToolOutputAvailable
		w.p.Output = out
	}
	w.dirty = true
	_, err := s.commitAgent(ctx, a, synccore.MessageStreaming)
	return err
}

// suspend puts the tool in state and adds a pending interaction next to
// it; the caller commits both in one transaction. Caller holds s.mu.
func (s *live) suspend(t *turn, tool *workPart, state synccore.PartState, request map[string]any) string {
	tool.p.State = state
	tool.dirty = true
	iid := newID("int_")
	t.agent.add(synccore.Part{
		Type:          synccore.PartInteraction,
		StepID:        tool.p.StepID,
		InteractionID: iid,
		Status:        synccore.InteractionPending,
		Request:       request,
	})
	return iid
}

// waitAnswer blocks until Answer resolves the interaction the turn waits
// on, or the turn is cancelled.
func (t *turn) waitAnswer() (approved bool, err error) {
	select {
	case approved = <-t.answers:
		return approved, nil
	case <-t.ctx.Done():
		return false, context.Cause(t.ctx)
	}
}
