package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// The AI SDK's chat endpoints (docs/ai-sdk.md), so that an unmodified
// useChat app with DefaultChatTransport({api: server + "/v1/chat"}) and the
// chat id set to an agentsync session id uses the reference server:
//
//	POST /v1/chat               a last message from the user is posted and
//	                            the agent's reply streamed (UI message
//	                            stream); a last message from the assistant
//	                            carries approval responses (useChat's
//	                            addToolApprovalResponse): they answer the
//	                            interactions and the reply streams on
//	GET  /v1/chat/{id}/stream   resumes the reply being streamed: what was
//	                            streamed so far, then the rest; 204 if none
//	POST /v1/chat/{id}/stop     the chat's stop (useChat's stop(), sent by
//	                            the client's withServerStop transport): the
//	                            session's stop action, on whichever node
//	                            owns the session
//
// A client that goes away (an aborted fetch, a reload) stops nothing: the
// turn runs on and a reconnect resumes it. Only the stop endpoint stops.
//
// A stream ends when the reply is done or waits on an approval, as the AI
// SDK's own servers do: useChat sends the decision back only then. Both
// read the session through an ordinary subscription, so a resumed client
// gets what our own subscribers get.

// chatRequest is the body DefaultChatTransport posts; only the last
// message is read (the session already holds the history).
type chatRequest struct {
	ID       string      `json:"id"`
	Messages []uiMessage `json:"messages"`
	// Delivery of a message sent while a turn runs (httpwire.Delivery),
	// from useChat's request body: sendMessage(msg, {body: {delivery}}).
	Delivery string `json:"delivery"`
}

type uiMessage struct {
	ID    string   `json:"id"`
	Role  string   `json:"role"`
	Parts []uiPart `json:"parts"`
}

// uiPart holds the fields of the UIMessage parts the server reads: user
// text and files, and what the client has of an assistant message.
type uiPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text"`
	State      string      `json:"state"`
	URL        string      `json:"url"`
	MediaType  string      `json:"mediaType"`
	Filename   string      `json:"filename"`
	ToolCallID string      `json:"toolCallId"`
	Approval   *uiApproval `json:"approval"`
}

type uiApproval struct {
	ID       string `json:"id"`
	Approved *bool  `json:"approved"`
}

func (req *chatRequest) last() (*uiMessage, error) {
	if req.ID == "" {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "id (the chat id, an agentsync session id) is required")
	}
	if len(req.Messages) == 0 {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "messages is empty")
	}
	return &req.Messages[len(req.Messages)-1], nil
}

// approvalResponses are the decisions in an assistant message: tool parts
// in state approval-responded, keyed by approval id (an interaction_id).
func (m *uiMessage) approvalResponses() map[string]bool {
	out := map[string]bool{}
	for _, p := range m.Parts {
		if p.State == "approval-responded" && p.Approval != nil && p.Approval.Approved != nil {
			out[p.Approval.ID] = *p.Approval.Approved
		}
	}
	return out
}

// userParts converts the text and file parts of a user message.
func (m *uiMessage) userParts() ([]synccore.Part, error) {
	var parts []synccore.Part
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			parts = append(parts, synccore.Part{Type: synccore.PartText, Text: p.Text})
		case "file":
			parts = append(parts, synccore.Part{Type: synccore.PartFile, URL: p.URL, MediaType: p.MediaType, Filename: p.Filename})
		}
	}
	if len(parts) == 0 {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "the last message has no text or file part")
	}
	return parts, nil
}

// chatPost: POST /v1/chat. It subscribes before posting, so no frame of
// the reply can be missed.
func (a *api) chatPost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req chatRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	last, err := req.last()
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	g, err := a.checkAccess(ctx, req.ID, levelWrite)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	sub, release, ok := a.subscribeBounded(ctx, w, r, req.ID)
	if !ok {
		return
	}
	defer release()
	defer func() { sub.Close() }()
	switch last.Role {
	case "assistant":
		a.chatContinue(w, r, req.ID, &sub, last)
		return
	case "user":
	default:
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "the last message must be the user's or the assistant's, not %q", last.Role))
		return
	}
	parts, err := last.userParts()
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	if parts, err = withAuthor(ctx, g, parts); err != nil {
		a.writeError(w, r, err)
		return
	}
	post := session.PostMessage{Parts: parts, Delivery: req.Delivery}
	user, err := a.mgr.PostMessage(ctx, req.ID, post)
	if owners, ferr := a.chatElsewhere(w, r, err, http.MethodPost, "/v1/sessions/"+url.PathEscape(req.ID)+"/messages", post, http.StatusCreated); owners != nil {
		err = json.Unmarshal(owners, &user)
	} else {
		err = ferr
	}
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	reply := func(m *synccore.Message) bool { return m.Role == synccore.RoleAgent && m.Sequence > user.Sequence }
	if req.Delivery == string(httpwire.DeliveryQueue) || req.Delivery == string(httpwire.DeliveryInterrupt) {
		// Its own turn answers it, once the running one ends: the stream
		// waits for that turn's message.
		reply = func(m *synccore.Message) bool { return m.Role == synccore.RoleAgent && m.TurnID == user.TurnID }
	}
	startSSE(w)
	a.streamUI(ctx, w, req.ID, &sub, newUIEmitter(w), reply, nil)
}

// chatContinue answers the approvals of the client's assistant message
// and streams that message on from what the client has of it.
func (a *api) chatContinue(w http.ResponseWriter, r *http.Request, sessionID string, sub *subscriber, last *uiMessage) {
	ctx := r.Context()
	decisions := last.approvalResponses()
	if len(decisions) == 0 {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "the last message is the assistant's but holds no approval response"))
		return
	}
	for id, approved := range decisions {
		response := map[string]any{"approved": approved}
		_, err := a.mgr.Answer(ctx, sessionID, id, response)
		_, err = a.chatElsewhere(w, r, err, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/interactions/"+url.PathEscape(id),
			answerRequest{Response: response}, http.StatusOK)
		var te *synccore.Error
		if errors.As(err, &te) && te.Code == synccore.CodeNotPending {
			err = nil // answered already (a retried request): the message shows the outcome
		}
		if err != nil {
			a.writeError(w, r, err)
			return
		}
	}
	base, err := a.findMessage(ctx, sessionID, func(m *synccore.Message) bool { return m.MessageID == last.ID })
	if err == nil && base == nil {
		err = synccore.Errorf(synccore.CodeNotFound, "message %q is not among the session's latest", last.ID)
	}
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	em := newUIEmitter(w)
	em.seed(base, last.Parts)
	startSSE(w)
	if base.State == synccore.MessageDone {
		if err := em.emit(base); err == nil {
			_ = em.finish()
		}
		return
	}
	a.streamUI(ctx, w, sessionID, sub, em, func(m *synccore.Message) bool { return m.MessageID == base.MessageID }, base)
}

// chatResume: GET /v1/chat/{id}/stream, the reply still streaming, if any.
func (a *api) chatResume(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	sub, release, ok := a.subscribeBounded(ctx, w, r, id)
	if !ok {
		return
	}
	defer release()
	defer func() { sub.Close() }()
	// Subscribed first: the snapshot read now is at least as new as the
	// subscription's start, and later changes arrive as frames.
	last, err := a.lastMessage(ctx, id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	if last == nil || last.Role != synccore.RoleAgent || last.State != synccore.MessageStreaming {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	target := last.MessageID
	startSSE(w)
	a.streamUI(ctx, w, id, &sub, newUIEmitter(w), func(m *synccore.Message) bool { return m.MessageID == target }, last)
}

// chatStopRequest is the optional body of POST /v1/chat/{id}/stop.
type chatStopRequest struct {
	// MessageID, when set, is the agent message the client saw streaming
	// (the stream's start chunk): the stop applies only while that message
	// is still the one streaming, so a stop sent late never stops the
	// next turn.
	MessageID string `json:"message_id" msgpack:"message_id"`
}

// chatStop: POST /v1/chat/{id}/stop, the stop of an AI SDK chat. It is the
// session's stop action (ActionStop): the turn is cancelled on the owner
// (a request to another node is forwarded there), its message closes with
// a "Stopped" action part, and its pending interactions are cancelled. It
// answers the closed message (200), or 204 when nothing was running (or
// message_id is no longer streaming): a stop that lost the race with the
// end of its turn is not an error.
func (a *api) chatStop(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	var req chatStopRequest
	if had, err := a.decodeBodyOptional(w, r, &req); had && err != nil {
		a.writeError(w, r, err)
		return
	}
	if req.MessageID != "" {
		m, err := a.findMessage(ctx, id, func(m *synccore.Message) bool { return m.MessageID == req.MessageID })
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if m == nil || m.State != synccore.MessageStreaming {
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	msg, err := a.mgr.Action(ctx, id, session.Action{ActionType: session.ActionStop})
	var elsewhere *session.OwnedElsewhere
	if errors.Is(err, synccore.ErrConflict) && !errors.As(err, &elsewhere) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	a.writeMessage(w, r, http.StatusOK, msg, err)
}
