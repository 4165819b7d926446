package session

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// retryLookback is how many of the newest messages retry reads to find
// the turn to run again (action-only messages may follow it).
const retryLookback = 20

// recoveryExcerpt bounds how much of the cut answer the recovery prompt
// quotes.
const recoveryExcerpt = 600

// retry runs again the last turn of the session if it ended with a
// recoverable error (interrupted by a crash, model_error, stopped...):
// it commits an internal user message, the recovery prompt, in that turn
// and starts the turn again; the model reads the prompt (the composer
// includes internal messages) and writes a new agent message of the same
// turn. The closed message stays as it was. Returns the recovery prompt.
func (s *live) retry(ctx context.Context) (synccore.Message, error) {
	page, err := s.m.store.Messages(ctx, s.id, store.PageQuery{Limit: retryLookback, IncludeInternal: true})
	if err != nil {
		return synccore.Message{}, fmt.Errorf("session %s: retry: %w", s.id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return synccore.Message{}, errStopping
	}
	if s.turn != nil {
		return synccore.Message{}, synccore.Errorf(synccore.CodeConflict, "a turn is running; stop it first")
	}
	if page.EndSequence != s.rec.HeadSequence {
		return synccore.Message{}, synccore.Errorf(synccore.CodeConflict, "the session changed while retrying; try again")
	}
	failed, ep, ok := retryable(page.Items)
	if !ok {
		return synccore.Message{}, synccore.Errorf(synccore.CodeConflict, "the last turn did not end with a recoverable error: nothing to retry")
	}
	msg, err := s.commitNew(ctx, synccore.Message{
		MessageID:  newID("msg_"),
		Role:       synccore.RoleUser,
		TurnID:     failed.TurnID,
		Visibility: synccore.VisibilityInternal,
		Parts: []synccore.Part{{
			PartID: partID(synccore.RoleUser, synccore.PartText, 1), Sequence: 1, Type: synccore.PartText,
			Text: RecoveryPrompt(ep, spokenText(failed)),
		}},
	})
	if err != nil {
		return synccore.Message{}, err
	}
	// The retry's action part opens the new agent message of the turn,
	// pending until the run's first model step starts (settleActions), or
	// failed if the run ends before.
	part := actionPart(Action{ActionType: ActionRetry}, "Retried")
	part.State = synccore.ActionPending
	part.Sequence, part.PartID = 1, partID(synccore.RoleAgent, part.Type, 1)
	agent, err := s.commitNew(ctx, synccore.Message{
		MessageID:  newID("msg_"),
		Role:       synccore.RoleAgent,
		State:      synccore.MessageStreaming,
		TurnID:     failed.TurnID,
		Visibility: synccore.VisibilityVisible,
		Parts:      []synccore.Part{part},
	})
	if err != nil {
		return synccore.Message{}, err
	}
	// The run writes another version of the turn's answer: the n-th
	// after the n agent messages the turn holds (model.Request.Attempt;
	// the scripted model replays the scenario as its next take).
	attempt := 0
	for _, m := range page.Items {
		if m.Role == synccore.RoleAgent && m.TurnID == failed.TurnID && !onlyActions(m) {
			attempt++
		}
	}
	t := s.startTurnAttempt(ctx, failed.TurnID, msg.Sequence, attempt)
	t.agent = newAgentMsg(agent, t.own)
	t.agent.parts = []*workPart{{p: agent.Parts[0]}} // committed as it is
	return *msg, nil
}

// retryable finds the agent message a retry would run again: the newest
// message that is not only an action (a set_model after a failure is
// fine), if it is an agent message closed by a recoverable turn error.
func retryable(newestLast []synccore.Message) (synccore.Message, synccore.Part, bool) {
	for i := len(newestLast) - 1; i >= 0; i-- {
		m := newestLast[i]
		if m.Role == synccore.RoleAgent && onlyActions(m) {
			continue
		}
		if m.Role != synccore.RoleAgent || m.State != synccore.MessageDone || len(m.Parts) == 0 {
			return synccore.Message{}, synccore.Part{}, false
		}
		last := m.Parts[len(m.Parts)-1]
		ok := last.Type == synccore.PartError && last.Scope == synccore.ErrorScopeTurn && last.Recoverable
		return m, last, ok
	}
	return synccore.Message{}, synccore.Part{}, false
}

func onlyActions(m synccore.Message) bool {
	for _, p := range m.Parts {
		if p.Type != synccore.PartAction {
			return false
		}
	}
	return len(m.Parts) > 0
}

// spokenText is the answer text of a message, its text parts joined.
func spokenText(m synccore.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == synccore.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// RecoveryPrompt is the internal message a retry adds for the model: why
// the previous answer ended and the end of what it had said.
func RecoveryPrompt(ep synccore.Part, answered string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The previous answer was interrupted (%s: %s)", ep.Code, ep.Message)
	if answered == "" {
		b.WriteString(" before it said anything. Answer the last request again.")
		return b.String()
	}
	if len(answered) > recoveryExcerpt {
		cut := len(answered) - recoveryExcerpt
		for cut < len(answered) && !utf8.RuneStart(answered[cut]) {
			cut++
		}
		answered = "…" + answered[cut:]
	}
	fmt.Fprintf(&b, " after: %q. Continue from where it stopped, without repeating what was already said.", answered)
	return b.String()
}
