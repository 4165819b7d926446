package session

import (
	"context"
	"time"

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
	if _, span := s.m.startSpan(t.ctx, "tool"); span != nil {
		span.SetString("agentsync.tool", spec.Name)
		defer func() { span.End(nil) }()
	}
	switch {
	case spec.AsksUser:
		// The tool is the question: it runs until the user answers, and
		// the answer (committed by Answer) is its output.
		iid, expires := s.suspend(t, w, synccore.ToolRunning, map[string]any{
			"kind": KindQuestion, "question": model.Field(w.p.Input, "question"), "tool_call_id": callID,
		})
		if _, err := s.commitAgent(ctx, a, synccore.MessageStreaming); err != nil {
			s.mu.Unlock()
			return err
		}
		t.waiting = iid
		s.mu.Unlock()
		_, err := s.waitAnswer(ctx, t, iid, expires)
		return err

	case spec.NeedsApproval || s.rec.ApprovalMode == ApprovalAsk:
		iid, expires := s.suspend(t, w, synccore.ToolAwaitingApproval, map[string]any{
			"kind": KindApproval, "tool_call_id": callID, "tool_name": w.p.ToolName, "input": w.p.Input,
			"reason": approvalReason(spec.NeedsApproval),
		})
		if _, err := s.commitAgent(ctx, a, synccore.MessageStreaming); err != nil {
			s.mu.Unlock()
			return err
		}
		t.waiting = iid
		s.mu.Unlock()
		approved, err := s.waitAnswer(ctx, t, iid, expires)
		if err != nil || !approved {
			return err // a denial was committed by Answer, an expiry by expire
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
	callCtx := model.WithToolCall(t.ctx, model.ToolCall{SessionID: s.id, TurnID: t.id, ToolCallID: callID})
	out, files, runErr := s.runToolSafely(callCtx, tool, input)
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
		// Files the tool made are file parts of its step, after it.
		for _, f := range files {
			if f.URL == "" || f.MediaType == "" {
				continue
			}
			a.add(synccore.Part{Type: synccore.PartFile, StepID: w.p.StepID, URL: f.URL, MediaType: f.MediaType, Filename: f.Filename})
		}
	}
	w.dirty = true
	_, err := s.commitAgent(ctx, a, synccore.MessageStreaming)
	return err
}

// suspend puts the tool in state and adds a pending interaction next to
// it; the caller commits both in one transaction. With an interaction
// timeout the request carries expires_at, returned too. Caller holds s.mu.
func (s *live) suspend(t *turn, tool *workPart, state synccore.PartState, request map[string]any) (string, time.Time) {
	tool.p.State = state
	tool.dirty = true
	iid := newID("int_")
	var expires time.Time
	if d := s.m.interactionTimeout; d > 0 {
		expires = time.Now().Add(d).UTC()
		request["expires_at"] = expires.Format(time.RFC3339Nano)
	}
	t.agent.add(synccore.Part{
		Type:          synccore.PartInteraction,
		StepID:        tool.p.StepID,
		InteractionID: iid,
		Status:        synccore.InteractionPending,
		Request:       request,
	})
	return iid, expires
}

// waitAnswer blocks until Answer resolves the interaction iid the turn
// waits on, the turn is cancelled, or the interaction expires (expires,
// zero for never): then it is closed unanswered (expire) and waitAnswer
// returns false and no error, and the turn goes on.
func (s *live) waitAnswer(ctx context.Context, t *turn, iid string, expires time.Time) (approved bool, err error) {
	var timeout <-chan time.Time
	if !expires.IsZero() {
		timer := time.NewTimer(time.Until(expires))
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case approved = <-t.answers:
		return approved, nil
	case <-t.ctx.Done():
		return false, context.Cause(t.ctx)
	case <-timeout:
	}
	expired, err := s.expire(ctx, t, iid)
	if err != nil || expired {
		return false, err
	}
	// Answered just before the deadline: the answer is on its way.
	select {
	case approved = <-t.answers:
		return approved, nil
	case <-t.ctx.Done():
		return false, context.Cause(t.ctx)
	}
}

// expire closes the pending interaction iid whose deadline passed: the
// interaction is cancelled (response {"expired": true}) and its tool ends
// output-error, in one commit. It reports false if an answer won the race.
func (s *live) expire(ctx context.Context, t *turn, iid string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.waiting != iid || t.agent == nil || t.agent.closed() {
		return false, nil
	}
	w := t.agent.interaction(iid)
	if w == nil || w.p.Status != synccore.InteractionPending {
		return false, nil
	}
	tool := t.agent.tool(model.Field(w.p.Request, "tool_call_id"))
	w.p.Status = synccore.InteractionCancelled
	w.p.Response = map[string]any{"expired": true}
	w.dirty = true
	if tool != nil {
		what := "approval"
		if model.Field(w.p.Request, "kind") == KindQuestion {
			what = "question"
		}
		tool.p.State = synccore.ToolOutputError
		tool.p.Output = map[string]any{"error": "the " + what + " expired unanswered"}
		tool.dirty = true
	}
	t.waiting = ""
	if _, err := s.commitAgent(ctx, t.agent, synccore.MessageStreaming); err != nil {
		return true, err
	}
	return true, nil
}
