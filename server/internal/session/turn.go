package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentsync/agentsync/server/internal/cluster"
	"time"

	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// turn is one run of the agent: model steps and tool calls until the model
// stops, writing one agent message. Its fields are guarded by the session's
// mu, except the channels and ctx.
type turn struct {
	id     string
	ctx    context.Context
	cancel context.CancelCauseFunc
	span   obs.Span      // nil without a Tracer
	done   chan struct{} // closed when the goroutine has finished the turn

	agent       *agentMsg // nil until the first step starts
	step        *step     // the step streaming now, nil between steps
	lastUserSeq int64     // newest user message of this turn (steers raise it)
	seen        int64     // newest user message a step has read
	startSeq    int64     // the user message that started the turn
	readSeq     int64     // newest user message a step of this turn has read (steer.go)
	waiting     string    // the interaction the turn is suspended on
	answers     chan bool // an answer arrived (approved?); 1-buffered
	final       *synccore.Message
	stepRetries int // model steps run again after a failure (stepFailed)
	// own is the lease the turn began under (nil on one node): all its
	// commits go under it (epoch.go).
	own *cluster.Ownership
	// attempt is model.Request.Attempt: which version of its answer the
	// turn writes (0, or a regeneration's place among the alternatives).
	attempt int
}

// sessionError is a failure of the session itself (its model is gone):
// its error part has scope session.
type sessionError struct{ err error }

func (e *sessionError) Error() string { return e.err.Error() }
func (e *sessionError) Unwrap() error { return e.err }

// Causes of a turn's cancellation.
type stopCause struct{ action synccore.Part }

func (c *stopCause) Error() string { return "the turn was stopped" }

var (
	errShutdown = errors.New("the server is shutting down")
	errTurnOver = errors.New("the turn is over")
)

// startTurn begins a turn for the user message at seq; with a Tracer, its
// span is a child of parent's (the request that started it). Caller holds
// s.mu.
func (s *live) startTurn(parent context.Context, id string, seq int64) *turn {
	return s.startTurnAttempt(parent, id, seq, 0)
}

// startTurnAttempt is startTurn writing another version of the turn's
// answer (model.Request.Attempt). Caller holds s.mu.
func (s *live) startTurnAttempt(parent context.Context, id string, seq int64, attempt int) *turn {
	base, span := s.m.base, obs.Span(nil)
	if tr := s.m.tracer; tr != nil {
		// The turn outlives the request: only the span comes from it.
		base, span = tr.Start(context.WithoutCancel(parent), "turn")
		span.SetString("agentsync.turn_id", id)
		span.SetString("agentsync.model", s.rec.Model)
		span.SetString("agentsync.node", s.m.node)
	}
	ctx, cancel := context.WithCancelCause(base)
	t := &turn{id: id, ctx: ctx, cancel: cancel, done: make(chan struct{}), lastUserSeq: seq, startSeq: seq, answers: make(chan bool, 1),
		own: s.own, attempt: attempt, span: span}
	s.turn = t
	s.m.obs.TurnStarted(s.rec.Model)
	s.m.turns.Add(1)
	s.m.running.Add(1)
	on := true
	s.m.sessionChanged(s.rec.Owner, s.rec.SessionID, false, &on)
	go s.runTurn(t)
	return t
}

func (s *live) runTurn(t *turn) {
	defer s.m.turns.Done()
	defer s.m.running.Add(-1)
	defer close(t.done)
	defer t.cancel(nil)
	err := s.turnLoop(t)
	// Mark the turn over before endTurn takes the lock, so a message
	// posted meanwhile starts a new turn instead of joining this one.
	t.cancel(errTurnOver)
	s.endTurn(t, err)
	s.mu.Lock()
	running := s.turn != nil // a queued message may have started the next
	owner, id := s.rec.Owner, s.rec.SessionID
	s.mu.Unlock()
	s.m.sessionChanged(owner, id, false, &running)
	if t.span != nil {
		t.span.End(err)
	}
}

// turnLoop runs steps until the model stops with nothing left to answer.
// A nil return means the message was closed normally by the last step.
func (s *live) turnLoop(t *turn) error {
	// Commits must not fail because the turn was cancelled; they are the
	// turn's spans still (WithoutCancel keeps its values).
	ctx := context.WithoutCancel(t.ctx)
	for n := 1; ; n++ {
		if err := t.ctx.Err(); err != nil {
			return context.Cause(t.ctx)
		}
		if n > s.m.maxSteps {
			return synccore.Errorf(CodeTooManySteps, "the turn took more than %d model steps", s.m.maxSteps)
		}
		s.mu.Lock()
		modelName := s.rec.Model
		s.mu.Unlock()
		provider, ok := s.m.models[modelName]
		if !ok {
			// The session names a model this server no longer has: a
			// failure of the session, not of this turn.
			return &sessionError{synccore.Errorf(synccore.CodeBadRequest, "the session's model %q is not configured on this server; set another one", modelName)}
		}
		win, err := s.composeWindow(ctx, t, provider, modelName)
		if err != nil {
			if t.ctx.Err() != nil {
				return context.Cause(t.ctx)
			}
			return fmt.Errorf("compose: %w", err)
		}
		seen := win.seen

		s.mu.Lock()
		t.seen = seen
		if t.agent == nil {
			// The agent message exists from the first step on, so a crash
			// leaves a row that recovery closes.
			msg, err := s.commitNewUnder(ctx, t.own, synccore.Message{
				MessageID:  newID("msg_"),
				Role:       synccore.RoleAgent,
				State:      synccore.MessageStreaming,
				TurnID:     t.id,
				Visibility: synccore.VisibilityVisible,
				Parts:      []synccore.Part{},
			})
			if err != nil {
				s.mu.Unlock()
				return err
			}
			t.agent = newAgentMsg(msg, t.own)
		}
		st := &step{id: fmt.Sprintf("step-%d", n), blocks: map[string]*workPart{}}
		t.step = st
		s.markRead(t, st, seen)
		s.settleActions(t)
		s.mu.Unlock()

		req := model.Request{
			SessionID: s.id, TurnID: t.id, StepID: st.id, Step: n, Model: modelName,
			Messages: win.input, Tools: s.m.tools.Specs(), Attempt: t.attempt,
		}
		sm := stepMeter{obs: s.m.obs, model: modelName, began: time.Now(), usage: -1}
		stepCtx, span := s.m.startSpan(t.ctx, "model.step")
		if span != nil {
			span.SetString("agentsync.model", modelName)
			span.SetInt("agentsync.step", int64(n))
		}
		err = s.stream(stepCtx, provider, req, func(ev model.Event) error {
			sm.see(&ev)
			return s.apply(t, st, ev)
		})
		if span != nil {
			span.SetInt("agentsync.deltas", sm.deltas)
			span.End(err)
		}
		if err != nil {
			if t.ctx.Err() != nil {
				return context.Cause(t.ctx)
			}
			if retried, serr := s.stepFailed(ctx, t, st, n, err); serr != nil || !retried {
				if serr != nil {
					return serr
				}
				return err
			}
			continue // the step failed before it said anything: run it once more
		}
		sm.done()

		closed, calls, err := s.finishStep(ctx, t, st, seen)
		if err != nil || closed {
			return err
		}
		for _, id := range calls {
			if err := s.runTool(ctx, t, id); err != nil {
				return err
			}
		}
	}
}

// finishStep validates the step and commits it in one transaction. The
// commit also closes the message when the model stopped, no tool is to run
// and no steer arrived that the model has not seen.
func (s *live) finishStep(ctx context.Context, t *turn, st *step, seen int64) (closed bool, calls []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.step = nil
	if err := st.validate(); err != nil {
		return false, nil, err
	}
	for _, w := range st.blocks {
		if w.p.State == synccore.StateStreaming {
			w.finishText()
		}
	}
	closed = len(st.calls) == 0 && t.lastUserSeq <= seen
	state := synccore.MessageStreaming
	if closed {
		state = synccore.MessageDone
		// A setting changed during this last step is stored: the next turn has it.
		for _, w := range t.agent.parts {
			if w.p.Type == synccore.PartAction && w.p.State == synccore.ActionPending {
				w.p.State, w.dirty = synccore.ActionCompleted, true
			}
		}
	}
	msg, err := s.commitAgent(ctx, t.agent, state)
	if err != nil {
		return false, nil, err
	}
	if closed {
		t.final = msg
		if s.turn == t {
			s.turn = nil // the next user message starts a new turn
		}
	}
	return closed, st.calls, nil
}

// endTurn closes the agent message of a turn that did not end normally
// (stopped, failed, shut down): what streamed so far is kept, open parts
// are closed, and an error part says why.
func (s *live) endTurn(t *turn, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.startQueued()
	defer s.answerUnread(t, err)
	if s.turn == t {
		s.turn = nil
	}
	t.step = nil
	if err == nil {
		return
	}
	ctx := s.m.base
	var stop *stopCause
	stopped := errors.As(err, &stop)
	if t.agent == nil || t.agent.closed() {
		// Placement rule: no agent message to hold the action or the
		// error, so it gets one of its own. A turn that failed before it
		// said anything (an unknown or unreachable model, a composer that
		// cannot read the history) still answers its user message, with
		// the error a retry can act on; on shutdown recovery owns it.
		var part synccore.Part
		switch {
		case stopped:
			part = stop.action
		case errors.Is(err, errShutdown):
			return
		default:
			part = s.turnErrorPart(t, err)
		}
		msg, cerr := s.commitNewUnder(ctx, t.own, singlePartMessage(t.id, part))
		if cerr != nil {
			s.log.ErrorContext(t.ctx, "commit the message that ends the turn", "turn_id", t.id, "err", cerr)
			return
		}
		t.final = msg
		return
	}
	a := t.agent
	var ep synccore.Part
	switch {
	case stopped:
		a.closeOpen("the turn was stopped")
		a.add(stop.action)
		ep = synccore.Part{Type: synccore.PartError, Scope: synccore.ErrorScopeTurn, Recoverable: true,
			Code: CodeStopped, Message: "the user stopped the turn"}
	case errors.Is(err, errShutdown):
		a.closeOpen("the server shut down")
		ep = synccore.Part{Type: synccore.PartError, Scope: synccore.ErrorScopeTurn, Recoverable: true,
			Code: CodeShutdown, Message: "the server shut down before the turn finished"}
	default:
		a.closeOpen("the turn failed")
		ep = s.turnErrorPart(t, err)
	}
	a.add(ep)
	msg, cerr := s.commitAgent(ctx, a, synccore.MessageDone)
	if cerr != nil {
		// The row stays streaming: closed later under the turn's lease,
		// or by the next owner's recovery (epoch.go); on one node, by
		// recovery on the next start.
		s.log.ErrorContext(t.ctx, "close agent message", "turn_id", t.id, "err", cerr)
		s.closeLater(t, a)
		return
	}
	t.final = msg
}

// turnErrorPart is the error part of a turn that failed: the typed code and
// message of a synccore.Error, else model_error; recoverable unless the
// model said a retry cannot help (a refused key).
func (s *live) turnErrorPart(t *turn, err error) synccore.Part {
	ep := synccore.Part{Type: synccore.PartError, Scope: synccore.ErrorScopeTurn, Recoverable: true,
		Code: CodeModelError, Message: err.Error()}
	var se *synccore.Error
	var me *model.Error
	var sess *sessionError
	if errors.As(err, &sess) {
		ep.Scope = synccore.ErrorScopeSession
	}
	switch {
	case errors.As(err, &me):
		ep.Recoverable = me.Recoverable
	case errors.As(err, &se):
		ep.Code, ep.Message = se.Code, se.Message
	}
	s.log.WarnContext(t.ctx, "turn failed", "turn_id", t.id, "err", err)
	return ep
}

// answerUnread starts the next turn for a user message that arrived while
// t ran (a steer) but that no step of t read, because t was stopped or
// failed first: queued messages are never left unanswered. It runs in the
// same turn, whose user message it is. Not on shutdown: recovery and
// -resume-interrupted own that case. Caller holds s.mu.
func (s *live) answerUnread(t *turn, err error) {
	if err == nil || errors.Is(err, errShutdown) || s.closing || s.turn != nil || t.lastUserSeq <= max(t.seen, t.startSeq) {
		return
	}
	s.log.InfoContext(t.ctx, "answering a message the ended turn never read", "turn_id", t.id, "sequence", t.lastUserSeq)
	s.startTurn(t.ctx, t.id, t.lastUserSeq)
}

// singlePartMessage is a closed agent message of the turn holding one part:
// an action or an error with no message of the turn to join.
func singlePartMessage(turnID string, part synccore.Part) synccore.Message {
	part.Sequence = 1
	part.PartID = partID(synccore.RoleAgent, part.Type, 1)
	return synccore.Message{
		MessageID:  newID("msg_"),
		Role:       synccore.RoleAgent,
		State:      synccore.MessageDone,
		TurnID:     turnID,
		Visibility: synccore.VisibilityVisible,
		Parts:      []synccore.Part{part},
	}
}

func lastUserSequence(history []synccore.Message) int64 {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == synccore.RoleUser {
			return history[i].Sequence
		}
	}
	return 0
}

// pause waits d, or until the turn is cancelled.
func (t *turn) pause(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-t.ctx.Done():
		return context.Cause(t.ctx)
	}
}

// maxStepRetries bounds the model steps of one turn run again after they
// failed before saying anything.
const maxStepRetries = 2

// stepFailed handles a model step that failed: one that said nothing (no
// part streamed, no tool called) after earlier steps of the turn (a tool
// loop's next step), with an error the provider calls retryable, is run
// once more, and the turn survives it: the agent message gets an error
// part of scope step saying so. Anything else fails the turn (retried
// false). Caller does not hold s.mu.
func (s *live) stepFailed(ctx context.Context, t *turn, st *step, n int, err error) (retried bool, _ error) {
	var me *model.Error
	if n == 1 || !errors.As(err, &me) || !me.Retryable || t.stepRetries >= maxStepRetries {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(st.blocks) > 0 || len(st.calls) > 0 || t.agent == nil || t.agent.closed() {
		return false, nil
	}
	t.stepRetries++
	t.step = nil
	t.agent.add(synccore.Part{Type: synccore.PartError, StepID: st.id, Scope: synccore.ErrorScopeStep,
		Code: CodeModelError, Message: err.Error(), Recoverable: true})
	if _, cerr := s.commitAgent(ctx, t.agent, synccore.MessageStreaming); cerr != nil {
		return false, cerr
	}
	s.log.WarnContext(t.ctx, "model step failed; running it again", "turn_id", t.id, "step", st.id, "err", err)
	return true, nil
}

// settleActions completes the pending actions of the turn's agent message
// as a model step starts: a model change made during the turn, a retry
// waiting for its run, take effect now. Caller holds s.mu.
func (s *live) settleActions(t *turn) {
	if t.agent == nil {
		return
	}
	for _, w := range t.agent.parts {
		if w.p.Type == synccore.PartAction && w.p.State == synccore.ActionPending {
			w.p.State = synccore.ActionCompleted
			w.dirty = true
			s.publish(t.agent.partFrame(w))
		}
	}
}
