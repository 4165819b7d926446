package api

import (
	"context"

	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Manager is the session engine as the API uses it; *session.Manager
// implements it. Every error it returns is a *synccore.Error.
type Manager interface {
	CreateOwnedSession(ctx context.Context, owner, model string) (store.Session, error)
	CreateOwnedSessionID(ctx context.Context, id, owner, model string) (store.Session, error)
	ListOwnedSessions(ctx context.Context, owner string, limit int) ([]store.Session, error)
	Owner(ctx context.Context, sessionID string) (string, error)
	Root(ctx context.Context, sessionID string) (string, error)
	Access() store.Access
	Messages(ctx context.Context, sessionID string, q store.PageQuery) (synccore.MessagePage, error)
	PostMessage(ctx context.Context, sessionID string, req session.PostMessage) (synccore.Message, error)
	Answer(ctx context.Context, sessionID, interactionID string, response any) (synccore.Message, error)
	Action(ctx context.Context, sessionID string, a session.Action) (synccore.Message, error)
	Subscribe(ctx context.Context, sessionID string) (*fanout.Subscriber, error)
	Rename(ctx context.Context, sessionID, title string) (store.Session, error)
	Delete(ctx context.Context, sessionID string) error
	Fork(ctx context.Context, sessionID string, req session.Fork) (store.Session, error)
	Branches(ctx context.Context, sessionID string, sequence int64) ([]store.Branch, error)
	BranchCounts(ctx context.Context, sessionID string, from, to int64) ([]store.BranchCount, error)
	Search(ctx context.Context, q store.SearchQuery) (store.SearchPage, error)
	Window(ctx context.Context, sessionID string, q store.PageQuery) (store.WindowPage, error)
}

var _ Manager = (*session.Manager)(nil)

// openSub subscribes through the manager, keeping the subscription code
// independent of the fanout package's concrete type.
func (a *api) openSub(ctx context.Context, sessionID string) (subscriber, error) {
	sub, err := a.mgr.Subscribe(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return sub, nil
}
