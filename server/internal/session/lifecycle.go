package session

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// DeletedReason is the reason of the error frame a deleted session's
// subscribers get (code not_found) before their socket closes
// (docs/protocol.md §4.4).
const DeletedReason = "session deleted"

// Rename sets a session's title (see store.RenameSession for the rules).
func (m *Manager) Rename(ctx context.Context, sessionID, title string) (store.Session, error) {
	if err := m.open(); err != nil {
		return store.Session{}, err
	}
	s, err := m.store.RenameSession(ctx, sessionID, title)
	if err == nil {
		m.sessionChanged(s.Owner, s.SessionID, false, nil)
	}
	return s, err
}

// sessionChanged tells OnSessionChanged, if set.
func (m *Manager) sessionChanged(owner, sessionID string, deleted bool, running *bool) {
	if m.onSession != nil {
		m.onSession(owner, sessionID, deleted, running)
	}
}

// Delete removes a session for good: its running turn is stopped, its rows
// deleted, and every subscriber gets an error frame (not_found, "session
// deleted") after which its subscription ends. Later requests about it are
// CodeNotFound.
func (m *Manager) Delete(ctx context.Context, sessionID string) error {
	return m.serve(ctx, sessionID, func(s *live) error {
		// No new turn or subscription from here on; a running turn closes its
		// message before its rows go.
		s.mu.Lock()
		s.closing = true
		t := s.turn
		if t != nil {
			t.cancel(errShutdown)
		}
		s.mu.Unlock()
		if t != nil {
			select {
			case <-t.done:
			case <-ctx.Done():
				return fmt.Errorf("session %s: waiting for the turn to stop before deleting: %w", sessionID, ctx.Err())
			}
		}

		// Rows first, then the in-memory session: a request in between finds
		// the closing session, one after finds nothing in the store either.
		if err := m.store.DeleteSession(ctx, sessionID); err != nil {
			return fmt.Errorf("session %s: delete: %w", sessionID, err)
		}
		// The error frame goes out (to other nodes too) before the lease is
		// released by the unload.
		s.mu.Lock()
		s.publish(synccore.Frame{Kind: synccore.FrameError, Code: synccore.CodeNotFound, Reason: DeletedReason})
		s.mu.Unlock()
		m.mu.Lock()
		m.unload(s)
		m.mu.Unlock()
		s.hub.Close()
		m.treeChanged(s.rec)
		m.sessionChanged(s.rec.Owner, sessionID, true, nil)
		return nil
	})
}

// treeChanged tells OnTreeChanged that the fork rec's fork point gained or
// lost an alternative; a root has none to gain.
func (m *Manager) treeChanged(rec store.Session) {
	if m.onTreeChanged == nil || rec.ForkSequence == 0 {
		return
	}
	root := rec.RootSessionID
	if root == "" {
		root = rec.SessionID
	}
	m.onTreeChanged(root, rec.ForkSequence)
}
