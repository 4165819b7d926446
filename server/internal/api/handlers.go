package api

import (
	"net/http"

	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// sessionBody is a session as the API shows it (docs/protocol.md §3).
type sessionBody struct {
	SessionID    string `json:"session_id" msgpack:"session_id"`
	Model        string `json:"model" msgpack:"model"`
	ApprovalMode string `json:"approval_mode,omitempty" msgpack:"approval_mode,omitempty"`
	CreatedAt    int64  `json:"created_at" msgpack:"created_at"`
	UpdatedAt    int64  `json:"updated_at,omitempty" msgpack:"updated_at,omitempty"`
	HeadSequence int64  `json:"head_sequence" msgpack:"head_sequence"`
	Title        string `json:"title" msgpack:"title"`
	// What this server accepts (capabilities.go).
	Actions []string `json:"actions" msgpack:"actions"`
	Models  []string `json:"models" msgpack:"models"`
}

func toSessionBody(s store.Session) sessionBody {
	return sessionBody{
		SessionID: s.SessionID, Model: s.Model, ApprovalMode: s.ApprovalMode,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, HeadSequence: s.HeadSequence,
		Title: s.Title,
	}
}

type createSessionRequest struct {
	Model string `json:"model" msgpack:"model"`
}

type sessionList struct {
	Items []sessionBody `json:"items" msgpack:"items"`
}

type answerRequest struct {
	Response any `json:"response" msgpack:"response"`
}

// createSession: POST /v1/sessions {"model"?}. The body is optional.
func (a *api) createSession(w http.ResponseWriter, r *http.Request) {
	var req createSessionRequest
	if present, err := a.decodeBodyOptional(w, r, &req); err != nil && present {
		a.writeError(w, r, err)
		return
	}
	s, err := a.mgr.CreateOwnedSession(r.Context(), principal(r.Context()), req.Model)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.writeValue(w, r, http.StatusCreated, a.withCapabilities(toSessionBody(s)))
}

// listSessions: GET /v1/sessions?limit=, newest first.
func (a *api) listSessions(w http.ResponseWriter, r *http.Request) {
	limit, err := parseLimit(r.URL.Query())
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	list, err := a.mgr.ListOwnedSessions(r.Context(), principal(r.Context()), limit)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out := sessionList{Items: make([]sessionBody, 0, len(list))}
	for _, s := range list {
		out.Items = append(out.Items, a.withCapabilities(toSessionBody(s)))
	}
	a.writeValue(w, r, http.StatusOK, out)
}

// getMessages: GET /v1/sessions/{id}/messages, one SessionMessagePage.
func (a *api) getMessages(w http.ResponseWriter, r *http.Request) {
	p, err := parsePageParams(r.URL.Query())
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	page, err := a.mgr.Messages(r.Context(), r.PathValue("id"), store.PageQuery{
		Limit: p.Limit, BeforeSequence: p.BeforeSequence, IncludeInternal: p.IncludeInternal,
	})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	// A nil slice would reach JavaScript as null: always send arrays.
	if page.Items == nil {
		page.Items = []synccore.Message{}
	}
	for i := range page.Items {
		fillParts(&page.Items[i])
	}
	a.writeValue(w, r, http.StatusOK, page)
}

// postMessage: POST /v1/sessions/{id}/messages, answers the user message.
func (a *api) postMessage(w http.ResponseWriter, r *http.Request) {
	var req session.PostMessage
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	req.IdempotencyKey = r.Header.Get("Idempotency-Key")
	msg, err := a.mgr.PostMessage(r.Context(), r.PathValue("id"), req)
	a.writeMessage(w, r, http.StatusCreated, msg, err)
}

// answer: POST /v1/sessions/{id}/interactions/{interaction_id}.
func (a *api) answer(w http.ResponseWriter, r *http.Request) {
	var req answerRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	if req.Response == nil {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "response is required"))
		return
	}
	msg, err := a.mgr.Answer(r.Context(), r.PathValue("id"), r.PathValue("interaction_id"), req.Response)
	a.writeMessage(w, r, http.StatusOK, msg, err)
}

// action: POST /v1/sessions/{id}/actions.
func (a *api) action(w http.ResponseWriter, r *http.Request) {
	var req session.Action
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	msg, err := a.mgr.Action(r.Context(), r.PathValue("id"), req)
	a.writeMessage(w, r, http.StatusOK, msg, err)
}

func (a *api) writeMessage(w http.ResponseWriter, r *http.Request, status int, msg synccore.Message, err error) {
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	fillParts(&msg)
	a.writeValue(w, r, status, msg)
}

// fillParts replaces a nil parts slice with an empty one (null on the wire
// would break clients that iterate it).
func fillParts(m *synccore.Message) {
	if m.Parts == nil {
		m.Parts = []synccore.Part{}
	}
}
