package session

import (
	"context"
	"errors"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Epochs (docs/storage.md, "A paused owner"). What this node knows of a
// session it serves is the session's truth only while it holds the lease:
// a node that was paused past the lease (SIGSTOP, a long GC pause, a
// frozen VM) wakes up with requests queued and a memory that another node
// may have moved past. So:
//
//   - a claim trusts an ownership only once confirmed (cluster.Ownership
//     .Confirm: at once while the lease is valid by the local clock, else
//     a renewal now);
//   - a request whose answer came from memory and failed (a fenced commit,
//     "not pending", ...) while the lease could not be confirmed is
//     answered as if this node had never served the session (serve):
//     claimed again, which forwards it to the new owner or serves it here
//     at a new epoch, never a stale-lease conflict;
//   - a turn commits under the lease it began under (turn.own,
//     commitUnder), so nothing of an old epoch lands;
//   - a turn whose closing commit failed while the node keeps the lease
//     has its message closed under that lease as soon as the store takes
//     it (closeLater), so it does not stay streaming.

// RetryLater is a refusal the client should retry after RetryAfter (503
// closed, with Retry-After): this node could not tell whether it still
// serves the session, or could not take it.
type RetryLater struct {
	After time.Duration
	typed *synccore.Error
	err   error
}

func (e *RetryLater) Error() string {
	if e.err != nil {
		return e.typed.Error() + ": " + e.err.Error()
	}
	return e.typed.Error()
}

// Unwrap is the typed CodeClosed error (503) the client gets.
func (e *RetryLater) Unwrap() error { return e.typed }

// RetryAfter is how long the client should wait before retrying.
func (e *RetryLater) RetryAfter() time.Duration { return e.After }

// retryLater refuses a request about the session for now: the store could
// not answer this node's claim (cause), or its lease was lost twice in a
// row.
func (m *Manager) retryLater(sessionID string, cause error) error {
	return &RetryLater{After: time.Second, err: cause, typed: synccore.Errorf(synccore.CodeClosed,
		"session %q: node %q cannot tell who serves the session right now; retry", sessionID, m.node)}
}

// serve runs fn on the session, served here (served), and answers as if
// this node had never served it when fn's failure may come from a lease
// lost meanwhile: fn then ran again once, after a fresh claim (which
// forwards it to the new owner, OwnedElsewhere, or serves it here at a
// new epoch). Nothing of the first run landed: its commit was fenced, or
// it refused before writing. A lease lost again is RetryLater, never the
// stale lease's conflict.
func (m *Manager) serve(ctx context.Context, id string, fn func(s *live) error) error {
	for attempt := 0; ; attempt++ {
		s, err := m.served(ctx, id)
		if err != nil {
			return err
		}
		err = fn(s)
		stale := err != nil && s.decidedStale(ctx, err)
		m.release(s)
		switch {
		case !stale:
			return err
		case attempt > 0:
			return m.retryLater(id, err)
		}
		s.log.Info("request answered from a lease this node no longer holds: claiming the session again", "err", err)
	}
}

// serveMessage is serve for a request answered with a message.
func serveMessage(ctx context.Context, m *Manager, id string, fn func(s *live) (synccore.Message, error)) (synccore.Message, error) {
	var out synccore.Message
	err := m.serve(ctx, id, func(s *live) error {
		msg, err := fn(s)
		out = msg
		return err
	})
	return out, err
}

// decidedStale reports whether err, a failure of a request served here,
// may have been decided on a lease this node no longer holds: a fenced
// commit, or a refusal made from memory (not pending, not found, a
// conflict) while the lease cannot be confirmed.
func (s *live) decidedStale(ctx context.Context, err error) bool {
	if s.m.keeper == nil {
		return false
	}
	if errors.Is(err, store.ErrLeaseLost) {
		return true
	}
	var se *synccore.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case synccore.CodeNotPending, synccore.CodeNotFound, synccore.CodeConflict:
	default:
		return false
	}
	s.mu.Lock()
	o := s.own
	s.mu.Unlock()
	return o == nil || o.Confirm(ctx) != nil
}

// closeLater closes the agent message a of turn t, whose closing commit
// failed (the database was unreachable), under the lease t began under:
// the commit is retried with a backoff until the store takes it, refuses
// it for good, or the lease is lost (the next owner's recovery closes the
// message then). So a node that keeps the lease does not leave the message
// streaming. Caller holds s.mu.
func (s *live) closeLater(t *turn, a *agentMsg) {
	if a.own == nil || s.m.keeper == nil {
		return
	}
	go func() {
		wait := 100 * time.Millisecond
		for {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-a.own.LostC():
				timer.Stop()
				return
			}
			wait = min(2*wait, 2*time.Second)
			s.mu.Lock()
			if s.own != a.own || a.closed() {
				s.mu.Unlock()
				return
			}
			ctx, cancel := context.WithTimeout(s.m.base, 5*time.Second)
			msg, err := s.commitAgent(ctx, a, synccore.MessageDone)
			cancel()
			if err == nil {
				t.final = msg
			}
			s.mu.Unlock()
			var se *synccore.Error
			switch {
			case err == nil:
				s.log.Info("closed a turn's message after its closing commit failed", "turn_id", t.id)
				return
			case errors.As(err, &se) || errors.Is(err, store.ErrLeaseLost):
				s.log.Error("close a turn's message: refused", "turn_id", t.id, "err", err)
				return
			}
			s.log.Warn("close a turn's message after its closing commit failed", "turn_id", t.id, "err", err)
		}
	}()
}
