package session

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Search finds the messages of q.Owner's sessions matching q.Text
// (store.Searcher): what the store committed, on any node.
func (m *Manager) Search(ctx context.Context, q store.SearchQuery) (store.SearchPage, error) {
	if q.Limit < 0 {
		return store.SearchPage{}, synccore.Errorf(synccore.CodeBadRequest, "limit %d is negative", q.Limit)
	}
	return m.store.Search(ctx, q)
}

// Window reads one page of the session's committed snapshot around or
// after a sequence, or as Messages does (store.Windower).
func (m *Manager) Window(ctx context.Context, sessionID string, q store.PageQuery) (store.WindowPage, error) {
	if q.Limit < 0 {
		return store.WindowPage{}, synccore.Errorf(synccore.CodeBadRequest, "limit %d is negative", q.Limit)
	}
	return m.store.Window(ctx, sessionID, q)
}
