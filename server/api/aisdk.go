package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/agentsync/agentsync/server/session"
	"github.com/agentsync/agentsync/server/store"
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
	sub, err := a.openSub(ctx, req.ID)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	defer func() { sub.Close() }()
	if last.Role == "assistant" {
		a.chatContinue(w, r, req.ID, &sub, last)
		return
	}
	parts, err := last.userParts()
	if err == nil && last.Role != "user" {
		err = synccore.Errorf(synccore.CodeBadRequest, "the last message must be the user's or the assistant's, not %q", last.Role)
	}
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	user, err := a.mgr.PostMessage(ctx, req.ID, session.PostMessage{Parts: parts})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	reply := func(m *synccore.Message) bool { return m.Role == synccore.RoleAgent && m.Sequence > user.Sequence }
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
		_, err := a.mgr.Answer(ctx, sessionID, id, map[string]any{"approved": approved})
		var te *synccore.Error
		if errors.As(err, &te) && te.Code == synccore.CodeNotPending {
			err = nil // answered already (a retried request): the message shows the outcome
		}
		if err != nil {
			a.writeError(w, r, err)
			return
		}
	}
	base, err := a.findMessage(ctx, sessionID, last.ID)
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
	sub, err := a.openSub(ctx, id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
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

// lastMessage is the session's newest message, or nil.
func (a *api) lastMessage(ctx context.Context, sessionID string) (*synccore.Message, error) {
	page, err := a.mgr.Messages(ctx, sessionID, store.PageQuery{Limit: 1})
	if err != nil || len(page.Items) == 0 {
		return nil, err
	}
	return &page.Items[len(page.Items)-1], nil
}

// findMessage looks a message up among the session's latest (a reply the
// client follows is one of them), or nil.
func (a *api) findMessage(ctx context.Context, sessionID, messageID string) (*synccore.Message, error) {
	page, err := a.mgr.Messages(ctx, sessionID, store.PageQuery{Limit: recentMessages})
	if err != nil {
		return nil, err
	}
	for i := range page.Items {
		if page.Items[i].MessageID == messageID {
			return &page.Items[i], nil
		}
	}
	return nil, nil
}

// recentMessages is how far back a followed reply is looked for.
const recentMessages = 20

// streamUI follows the subscription until the message matching isReply is
// done, sending it as a UI message stream. A resync (this client fell
// behind) or a gap re-subscribes and re-reads the message: the emitter
// sends only what the client lacks, so nothing is lost or doubled.
func (a *api) streamUI(ctx context.Context, w http.ResponseWriter, sessionID string, sub *subscriber, em *uiEmitter, isReply func(*synccore.Message) bool, base *synccore.Message) {
	var proj uiProjection
	if base != nil {
		proj.setMessage(base)
	}
	fail := func(err error) {
		a.log.Debug("ui stream ended", "session_id", sessionID, "err", err)
		if ctx.Err() == nil {
			te, _ := asTyped(err)
			_ = em.write(chunk{"type": "error", "errorText": te.Error()})
		}
	}
	for {
		frames, err := (*sub).Next(ctx)
		reread := false
		for i := range frames {
			f := &frames[i]
			switch f.Kind {
			case synccore.FrameMessage:
				if proj.msg.MessageID == "" && isReply(f.Message) || f.Message.MessageID == proj.msg.MessageID {
					proj.setMessage(f.Message)
				}
			case synccore.FramePart:
				if f.MessageID == proj.msg.MessageID && f.MessageID != "" {
					proj.setPart(f.Revision, f.Part)
				}
			case synccore.FrameDelta:
				if f.MessageID == proj.msg.MessageID && f.MessageID != "" && !proj.appendText(f.Revision, f.PartID, f.Offset, f.Text) {
					reread = true
				}
			case synccore.FrameResync:
				reread = true
			case synccore.FrameError:
				fail(synccore.Errorf(f.Code, "%s", f.Reason))
				return
			}
		}
		if reread {
			if err := a.resubscribe(ctx, sessionID, sub, &proj); err != nil {
				fail(err)
				return
			}
			continue
		}
		if proj.msg.MessageID != "" {
			if werr := em.emit(&proj.msg); werr != nil {
				a.log.Debug("ui stream write failed", "session_id", sessionID, "err", werr)
				return
			}
			if proj.msg.State == synccore.MessageDone || awaitsApproval(&proj.msg) {
				_ = em.finish()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = synccore.Errorf(synccore.CodeClosed, "the server is shutting down")
			}
			fail(err)
			return
		}
	}
}

// resubscribe replaces a subscription that lost frames and re-reads the
// followed message from the snapshot.
func (a *api) resubscribe(ctx context.Context, sessionID string, sub *subscriber, proj *uiProjection) error {
	(*sub).Close()
	next, err := a.openSub(ctx, sessionID)
	if err != nil {
		return fmt.Errorf("resubscribe: %w", err)
	}
	*sub = next
	if proj.msg.MessageID == "" {
		return nil // the reply has not started: its message frame is still to come
	}
	m, err := a.findMessage(ctx, sessionID, proj.msg.MessageID)
	if err != nil {
		return fmt.Errorf("resubscribe: read snapshot: %w", err)
	}
	if m != nil {
		proj.setMessage(m)
	}
	return nil
}

// awaitsApproval reports a pending approval: the stream ends there, and
// useChat sends the decision back in a new request.
func awaitsApproval(m *synccore.Message) bool {
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending && requestField(p, "kind") == "approval" {
			return true
		}
	}
	return false
}
