package session

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Fork is a request to fork a session (docs/protocol.md, "Conversation
// tree"): before BeforeSequence, then optionally post Parts as the fork's
// first own message (an edit) or run the turn of the prefix's last user
// message again (Regenerate). Neither is "fork from here".
type Fork struct {
	BeforeSequence int64
	Parts          []synccore.Part
	Regenerate     bool
}

// regenerateLookback is how many messages before the fork point a
// regenerate reads to find the user message whose turn it runs again.
const regenerateLookback = 50

// Fork makes a fork of sessionID (same owner, model and approval mode) and
// returns it: O(1) whatever the prefix's length. With Parts the fork's
// first own message is that user message and its turn starts; with
// Regenerate the turn of the prefix's last user message runs again in the
// fork. The parent is never changed.
func (m *Manager) Fork(ctx context.Context, sessionID string, req Fork) (store.Session, error) {
	if req.Regenerate && len(req.Parts) > 0 {
		return store.Session{}, synccore.Errorf(synccore.CodeBadRequest, "parts and regenerate exclude each other")
	}
	var parts []synccore.Part
	if len(req.Parts) > 0 {
		var err error
		if parts, err = userParts(req.Parts); err != nil {
			return store.Session{}, err
		}
	}
	if err := m.open(); err != nil {
		return store.Session{}, err
	}
	parent, err := m.store.Session(ctx, sessionID)
	if err != nil {
		return store.Session{}, err
	}
	if err := store.CheckForkBefore(req.BeforeSequence, parent.HeadSequence); err != nil {
		return store.Session{}, err
	}
	var again synccore.Message // the user message a regenerate answers again
	if req.Regenerate {
		page, err := m.store.Messages(ctx, sessionID, store.PageQuery{
			Limit: regenerateLookback, BeforeSequence: req.BeforeSequence, IncludeInternal: true,
		})
		if err != nil {
			return store.Session{}, err
		}
		found := false
		for i := len(page.Items) - 1; i >= 0 && !found; i-- {
			if page.Items[i].Role == synccore.RoleUser {
				again, found = page.Items[i], true
			}
		}
		if !found {
			return store.Session{}, synccore.Errorf(synccore.CodeBadRequest,
				"no user message in the %d messages before %d: nothing to regenerate", regenerateLookback, req.BeforeSequence)
		}
	}
	now := m.now()
	fork, err := m.store.ForkSession(ctx, sessionID, req.BeforeSequence, store.Session{
		SessionID: newID("ses_"), Model: parent.Model, ApprovalMode: parent.ApprovalMode,
		CreatedAt: now, UpdatedAt: now, Owner: parent.Owner,
	})
	if err != nil {
		return store.Session{}, err
	}
	switch {
	case parts != nil:
		_, err = m.PostMessage(ctx, fork.SessionID, PostMessage{Parts: req.Parts})
	case req.Regenerate:
		// The new version's place among the alternatives at the fork point
		// (the fork is the newest): a deterministic model varies by it.
		attempt := 0
		if bs, berr := m.store.Branches(ctx, fork.SessionID, req.BeforeSequence); berr == nil {
			attempt = max(len(bs)-1, 0)
		}
		err = m.serve(ctx, fork.SessionID, func(s *live) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.closing {
				return errStopping
			}
			if s.turn != nil {
				return synccore.Errorf(synccore.CodeConflict, "a turn is running in the new fork")
			}
			s.startTurnAttempt(ctx, again.TurnID, again.Sequence, attempt)
			return nil
		})
	}
	if err != nil {
		// The fork is of no use without what it was made for.
		if derr := m.Delete(context.WithoutCancel(ctx), fork.SessionID); derr != nil {
			m.log.Warn("delete a fork whose first step failed", "session_id", fork.SessionID, "err", derr)
		}
		return store.Session{}, fmt.Errorf("session %s: fork: %w", sessionID, err)
	}
	if parts != nil || req.Regenerate {
		if s, err := m.store.Session(ctx, fork.SessionID); err == nil {
			fork = s
		}
	}
	m.sessionChanged(fork.Owner, fork.SessionID, false, nil)
	return fork, nil
}

// Branches lists the alternatives at position sequence of the session's
// path (store.Forker.Branches).
func (m *Manager) Branches(ctx context.Context, sessionID string, sequence int64) ([]store.Branch, error) {
	return m.store.Branches(ctx, sessionID, sequence)
}

// BranchCounts tells the positions from..to of the session's path with
// more than one alternative (store.Forker.BranchCounts).
func (m *Manager) BranchCounts(ctx context.Context, sessionID string, from, to int64) ([]store.BranchCount, error) {
	return m.store.BranchCounts(ctx, sessionID, from, to)
}
