package bindings

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentsync/agentsync/httpwire"
)

// Session is one session as the server shows it, with its title and what
// it accepts (httpwire.Session: the shape is declared once).
type Session = httpwire.Session

// Delivery is how a message sent while a turn runs is answered
// (SendOptions.Delivery).
type Delivery = httpwire.Delivery

// Deliveries of SendOptions.Delivery.
const (
	DeliverySteer     = httpwire.DeliverySteer
	DeliveryQueue     = httpwire.DeliveryQueue
	DeliveryInterrupt = httpwire.DeliveryInterrupt
)

// ActionType names a session operation (API.Action).
type ActionType = httpwire.ActionType

// InteractionResponse answers an interaction (Approval, Reply).
type InteractionResponse = httpwire.InteractionResponse

// Action types of POST /v1/sessions/{id}/actions, named as the wire names them.
const (
	ActionStop            = httpwire.ActionStop
	ActionSetModel        = httpwire.ActionSetModel
	ActionSetApprovalMode = httpwire.ActionSetApprovalMode
	ActionRetry           = httpwire.ActionRetry
)

// CreateSession creates a session; an empty model is the server's default.
func (a *API) CreateSession(ctx context.Context, model string) (Session, error) {
	var s Session
	err := a.do(ctx, http.MethodPost, "/v1/sessions", nil, httpwire.CreateSessionRequest{Model: model}, &s)
	return s, err
}

// Sessions lists the sessions, newest first (the server's default count).
func (a *API) Sessions(ctx context.Context) ([]Session, error) {
	return a.SessionsN(ctx, 0)
}

// SessionsN lists at most limit sessions, newest first; 0 is the server's
// default.
func (a *API) SessionsN(ctx context.Context, limit int) ([]Session, error) {
	var q url.Values
	if limit != 0 {
		q = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	var list httpwire.SessionList
	err := a.do(ctx, http.MethodGet, "/v1/sessions", q, nil, &list)
	return list.Items, err
}

// RenameSession sets a session's title (trimmed by the server; empty or
// over 120 characters is bad_request) and returns the session.
func (a *API) RenameSession(ctx context.Context, sessionID, title string) (Session, error) {
	var s Session
	err := a.do(ctx, http.MethodPatch, sessionPath(sessionID), nil, httpwire.RenameSessionRequest{Title: &title}, &s)
	return s, err
}

// DeleteSession stops the session's running turn and removes it with
// every message; its subscribers get a closing error frame. Afterwards
// every request about it is not_found (errors.Is(err, synccore.ErrNotFound)).
func (a *API) DeleteSession(ctx context.Context, sessionID string) error {
	return a.do(ctx, http.MethodDelete, sessionPath(sessionID), nil, nil, nil)
}

// Rename sets the title of the client's session (API.RenameSession).
func (c *Client) Rename(ctx context.Context, title string) (Session, error) {
	return c.api.RenameSession(ctx, c.cfg.SessionID, title)
}
