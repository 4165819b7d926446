package session

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
)

// CreateSession creates an empty session of the shared owner ("") with a
// model ("" = the default).
func (m *Manager) CreateSession(ctx context.Context, modelName string) (store.Session, error) {
	return m.CreateOwnedSession(ctx, "", modelName)
}

// ListSessions lists the shared owner's sessions, newest first.
func (m *Manager) ListSessions(ctx context.Context, limit int) ([]store.Session, error) {
	return m.ListOwnedSessions(ctx, "", limit)
}

// Owner returns the principal a session belongs to; CodeNotFound for an
// unknown id. A loaded session answers from memory.
func (m *Manager) Owner(ctx context.Context, sessionID string) (string, error) {
	m.mu.Lock()
	s, ok := m.live[sessionID]
	m.mu.Unlock()
	if ok {
		return s.owner, nil
	}
	rec, err := m.store.Session(ctx, sessionID)
	if err != nil {
		return "", err
	}
	return rec.Owner, nil
}

// Access is the store's record of shares and members (store.Access).
func (m *Manager) Access() store.Access { return m.store }

// Root returns the root of a session's conversation (its own id for a
// root); CodeNotFound for an unknown id.
func (m *Manager) Root(ctx context.Context, sessionID string) (string, error) {
	rec, err := m.store.Session(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if rec.RootSessionID == "" {
		return rec.SessionID, nil
	}
	return rec.RootSessionID, nil
}
