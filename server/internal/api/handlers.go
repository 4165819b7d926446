package api

import (
	"net/http"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// sessionBody is a session as the API shows it (docs/protocol.md §3),
// declared once in httpwire.
type sessionBody = httpwire.Session

func toSessionBody(s store.Session) sessionBody {
	return sessionBody{
		SessionID: s.SessionID, Model: s.Model, ApprovalMode: httpwire.ApprovalMode(s.ApprovalMode),
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, HeadSequence: s.HeadSequence,
		Title: s.Title, RootSessionID: s.RootSessionID, ParentSessionID: s.ParentSessionID, ForkSequence: s.ForkSequence,
	}
}

// answerRequest is httpwire.AnswerRequest decoded loosely: session.Answer
// checks the response's shape against the interaction's kind, so a wrong
// one is a bad_request naming the shape it needs.
type answerRequest struct {
	Response any `json:"response" msgpack:"response"`
}

// createSession: POST /v1/sessions {"model"?}. The body is optional.
func (a *api) createSession(w http.ResponseWriter, r *http.Request) {
	var req httpwire.CreateSessionRequest
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
	out := httpwire.SessionList{Items: make([]sessionBody, 0, len(list))}
	for _, s := range list {
		b := a.withCapabilities(toSessionBody(s))
		b.Running = a.lists.Running(s.SessionID)
		out.Items = append(out.Items, b)
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
	if p.AroundSequence > 0 || p.AfterSequence > 0 {
		a.getWindow(w, r, store.PageQuery{Limit: p.Limit, IncludeInternal: p.IncludeInternal,
			AroundSequence: p.AroundSequence, AfterSequence: p.AfterSequence})
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
	body, err := a.withBranches(r, r.PathValue("id"), page)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	a.writeValue(w, r, http.StatusOK, body)
}

// postMessage: POST /v1/sessions/{id}/messages, answers the user message.
func (a *api) postMessage(w http.ResponseWriter, r *http.Request) {
	var req httpwire.PostMessageRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	if err := a.checkFileParts(r, r.PathValue("id"), req.Parts); err != nil {
		a.writeError(w, r, err)
		return
	}
	parts, err := withAuthor(r.Context(), grantOf(r.Context()), req.Parts)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	req.Parts = parts
	msg, err := a.mgr.PostMessage(r.Context(), r.PathValue("id"), session.PostMessage{
		Parts: req.Parts, Visibility: req.Visibility, Delivery: string(req.Delivery), IdempotencyKey: r.Header.Get("Idempotency-Key"),
	})
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
	var req httpwire.ActionRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	msg, err := a.mgr.Action(r.Context(), r.PathValue("id"), session.Action{ActionType: string(req.ActionType), Value: req.Value})
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
