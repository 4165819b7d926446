package api

import (
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/session"
)

// modelLister is the part of a Manager that names its models; optional,
// so a Manager without it simply shows none.
type modelLister interface{ Models() []string }

// withCapabilities adds to a session what a client may do with it: the
// action types POST .../actions accepts (a demo shows Retry only if
// "retry" is there) and the models set_model accepts, the default first.
func (a *api) withCapabilities(b sessionBody) sessionBody {
	for _, t := range session.ActionTypes() {
		b.Actions = append(b.Actions, httpwire.ActionType(t))
	}
	if ml, ok := a.mgr.(modelLister); ok {
		b.Models = ml.Models()
	}
	return b
}
