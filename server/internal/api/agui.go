package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// POST /v1/agui: the AG-UI protocol (docs/ag-ui.md) for @ag-ui/client's
// HttpAgent. The body is a RunAgentInput; the answer is a stream of AG-UI
// events (server-sent events of JSON). threadId is the agentsync session
// id (a session is made with that id if there is none). A run:
//
//  1. answers the interrupts its resume entries name (approvals and
//     questions, through the same code paths as the interactions
//     endpoint), or else posts the last message of messages if it is the
//     user's and new (never the history: the session holds it);
//  2. sends RUN_STARTED, then MESSAGES_SNAPSHOT: the session's history as
//     it stands, the reply being streamed included as far as it has come;
//  3. streams that reply on (text, reasoning, tool calls and results,
//     activities) until it is done, or waits on an approval or a question;
//  4. sends RUN_FINISHED, with an interrupt outcome for what it waits on.
//
// A run with neither a resume nor a new message is a reconnect: it gets
// the snapshot, then the live tail of the reply still streaming, if any.
// Like /v1/chat, a client that goes away stops nothing.

// aguiInput is the part of a RunAgentInput the server reads.
type aguiInput struct {
	ThreadID       string            `json:"threadId"`
	RunID          string            `json:"runId"`
	Messages       []aguiInMessage   `json:"messages"`
	Context        []aguiInContext   `json:"context"`
	ForwardedProps map[string]any    `json:"forwardedProps"`
	Resume         []aguiResumeEntry `json:"resume"`
}

type aguiInMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type aguiInContext struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

type aguiResumeEntry struct {
	InterruptID string `json:"interruptId"`
	Status      string `json:"status"` // resolved | cancelled
	Payload     any    `json:"payload"`
}

type aguiContentPart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	} `json:"source"`
	Metadata map[string]any `json:"metadata"`
}

// aguiThreadID is what a threadId that names a new session may be: it
// becomes a session id (in NATS subjects and paths too).
var aguiThreadID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// aguiSnapshotLimit is how many of the latest messages MESSAGES_SNAPSHOT
// holds.
const aguiSnapshotLimit = synccore.MaxPageLimit

// userParts converts a user message's content: a string, or text and
// media parts (a url source stays a url, a data source becomes a data:
// URL).
func (m *aguiInMessage) userParts() ([]synccore.Part, error) {
	var text string
	if err := json.Unmarshal(m.Content, &text); err == nil {
		if text == "" {
			return nil, synccore.Errorf(synccore.CodeBadRequest, "the new user message is empty")
		}
		return []synccore.Part{{Type: synccore.PartText, Text: text}}, nil
	}
	var content []aguiContentPart
	if err := json.Unmarshal(m.Content, &content); err != nil {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "user message content: %v", err)
	}
	var parts []synccore.Part
	for _, c := range content {
		switch {
		case c.Type == "text":
			parts = append(parts, synccore.Part{Type: synccore.PartText, Text: c.Text})
		case c.Source != nil && (c.Source.Type == "url" || c.Source.Type == "data"):
			u := c.Source.Value
			if c.Source.Type == "data" {
				if _, err := base64.StdEncoding.DecodeString(u); err != nil {
					return nil, synccore.Errorf(synccore.CodeBadRequest, "a %s part's data is not base64", c.Type)
				}
				u = "data:" + c.Source.MimeType + ";base64," + u
			}
			name, _ := c.Metadata["filename"].(string)
			parts = append(parts, synccore.Part{Type: synccore.PartFile, URL: u, MediaType: c.Source.MimeType, Filename: name})
		}
	}
	if len(parts) == 0 {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "the new user message has no text or media part")
	}
	return parts, nil
}

// aguiRun: POST /v1/agui.
func (a *api) aguiRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var in aguiInput
	if err := a.decodeBody(w, r, &in); err != nil {
		a.writeError(w, r, err)
		return
	}
	if in.ThreadID == "" || in.RunID == "" {
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "threadId (an agentsync session id) and runId are required"))
		return
	}
	g, err := a.aguiThread(ctx, in.ThreadID)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	// The grant goes with the request: a post records its author.
	r = r.WithContext(context.WithValue(ctx, grantKey{}, g))
	ctx = r.Context()
	sub, release, ok := a.subscribeBounded(ctx, w, r, in.ThreadID)
	if !ok {
		return
	}
	defer release()
	defer func() { sub.Close() }()

	isReply, err := a.aguiWrite(w, r, &in)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	// Subscribed first: the snapshot is at least as new as the
	// subscription's start, and later changes arrive as frames.
	page, err := a.mgr.Messages(ctx, in.ThreadID, store.PageQuery{Limit: aguiSnapshotLimit})
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	var proj uiProjection
	for i := range page.Items {
		if isReply != nil && isReply(&page.Items[i]) {
			proj.setMessage(&page.Items[i])
			break
		}
	}
	if isReply != nil {
		// The store holds the reply as last committed; the subscription's
		// first frames hold what has streamed since (the join).
		if err := a.aguiJoin(ctx, in.ThreadID, &sub, &proj, isReply); err != nil {
			a.writeError(w, r, err)
			return
		}
	}
	items := page.Items
	if proj.msg.MessageID != "" {
		items = slices.Clone(items)
		at := slices.IndexFunc(items, func(m synccore.Message) bool { return m.MessageID == proj.msg.MessageID })
		if at >= 0 {
			items[at] = proj.msg
		} else {
			items = append(items, proj.msg)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	em := newAGUIEmitter(w)
	started := aguiEvent{"type": "RUN_STARTED", "threadId": in.ThreadID, "runId": in.RunID}
	if err := em.write(started); err != nil {
		return
	}
	if err := em.write(aguiEvent{"type": "MESSAGES_SNAPSHOT", "messages": aguiMessages(items)}); err != nil {
		return
	}
	var followed *synccore.Message
	if proj.msg.MessageID != "" {
		followed = &proj.msg
		em.seed(followed)
	}
	if isReply == nil || followed != nil && (followed.State == synccore.MessageDone || aguiInterrupts(followed) != nil) {
		_ = em.flush()
		a.aguiFinish(em, &in, followed)
		return
	}
	a.aguiFollow(ctx, &in, &sub, em, isReply, &proj)
}

// aguiJoin applies the subscription's frames to proj up to and with the
// first batch holding its hello: the join frames (hello, then the
// streaming projection) are queued together when the subscription opens.
func (a *api) aguiJoin(ctx context.Context, sid string, sub *subscriber, proj *uiProjection, isReply func(*synccore.Message) bool) error {
	for {
		frames, err := (*sub).Next(ctx)
		reread, hello, ferr := applyUIFrames(proj, frames, isReply)
		switch {
		case ferr != nil:
			return ferr
		case reread:
			if err := a.resubscribe(ctx, sid, sub, proj, isReply); err != nil {
				return err
			}
			continue
		case hello:
			return nil
		case err != nil:
			if errors.Is(err, io.EOF) {
				err = synccore.Errorf(synccore.CodeClosed, "the server is shutting down")
			}
			return err
		}
	}
}

// applyUIFrames applies one batch of frames to the followed message's
// projection. It reports a gap or a resync (reread: re-read and
// re-subscribe), whether the batch held the hello, and an error frame.
func applyUIFrames(proj *uiProjection, frames []synccore.Frame, isReply func(*synccore.Message) bool) (reread, hello bool, err error) {
	for i := range frames {
		f := &frames[i]
		switch f.Kind {
		case synccore.FrameHello:
			hello = true
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
			return reread, hello, synccore.Errorf(f.Code, "%s", f.Reason)
		}
	}
	return reread, hello, nil
}

// aguiThread makes sure the thread's session exists and that the caller
// may write to it (a run posts or answers): an unknown threadId of the
// allowed form becomes a new session of the caller with that id (never
// for a share link, which opens its own session only).
func (a *api) aguiThread(ctx context.Context, id string) (grant, error) {
	g, err := a.checkAccess(ctx, id, levelWrite)
	var te *synccore.Error
	if !errors.As(err, &te) || te.Code != synccore.CodeNotFound || isShare(ctx) {
		return g, err
	}
	if !aguiThreadID.MatchString(id) {
		return grant{}, synccore.Errorf(synccore.CodeBadRequest, "threadId %q is not a session and cannot name one (1 to 128 of A-Z a-z 0-9 _ -)", id)
	}
	if _, cerr := a.mgr.CreateOwnedSessionID(ctx, id, principal(ctx), ""); cerr != nil {
		if errors.As(cerr, &te) && te.Code == synccore.CodeConflict {
			return a.checkAccess(ctx, id, levelWrite) // made meanwhile, or another's: not found
		}
		return grant{}, cerr
	}
	return grant{role: httpwire.RoleOwner}, nil
}

// aguiWrite makes the run's write: the resume's answers, or the new user
// message. It returns which message the run follows (nil: none, the run
// only reports).
func (a *api) aguiWrite(w http.ResponseWriter, r *http.Request, in *aguiInput) (func(*synccore.Message) bool, error) {
	ctx := r.Context()
	sid := in.ThreadID
	if len(in.Resume) > 0 {
		var target string
		for _, e := range in.Resume {
			m, err := a.aguiAnswer(w, r, sid, e)
			if err != nil {
				return nil, err
			}
			if target == "" && m != nil {
				target = m.MessageID
			}
		}
		if target == "" {
			return a.aguiStreaming(ctx, sid)
		}
		return func(m *synccore.Message) bool { return m.MessageID == target }, nil
	}
	var last *aguiInMessage
	if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "user" {
		last = &in.Messages[n-1]
	}
	if last != nil && last.ID != "" {
		known, err := a.findMessage(ctx, sid, func(m *synccore.Message) bool { return m.MessageID == last.ID })
		if err != nil {
			return nil, err
		}
		if known != nil {
			last = nil // the session has it: a reconnect
		}
	}
	if last == nil {
		return a.aguiStreaming(ctx, sid)
	}
	parts, err := last.userParts()
	if err != nil {
		return nil, err
	}
	for _, c := range in.Context {
		parts = append(parts, synccore.Part{Type: synccore.PartContext, Tag: c.Description, Context: c.Value})
	}
	if parts, err = withAuthor(ctx, grantOf(ctx), parts); err != nil {
		return nil, err
	}
	delivery, _ := in.ForwardedProps["delivery"].(string)
	post := session.PostMessage{Parts: parts, Delivery: delivery}
	key := newForwardKey()
	if last.ID != "" {
		// The client's message id keys the post: a run retried after a
		// cut (its snapshot never arrived) does not post it twice.
		post.IdempotencyKey = "agui " + last.ID
		key = post.IdempotencyKey
	}
	user, err := a.mgr.PostMessage(ctx, sid, post)
	if owners, ferr := a.writeElsewhere(w, r, err, http.MethodPost, "/v1/sessions/"+url.PathEscape(sid)+"/messages", post, http.StatusCreated, key); owners != nil {
		err = json.Unmarshal(owners, &user)
	} else {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	if delivery == string(httpwire.DeliveryQueue) || delivery == string(httpwire.DeliveryInterrupt) {
		return func(m *synccore.Message) bool { return m.Role == synccore.RoleAgent && m.TurnID == user.TurnID }, nil
	}
	return func(m *synccore.Message) bool { return m.Role == synccore.RoleAgent && m.Sequence > user.Sequence }, nil
}

// aguiStreaming follows the session's last message if it is an agent's
// still open (streaming, or waiting on an interaction), else nothing.
func (a *api) aguiStreaming(ctx context.Context, sid string) (func(*synccore.Message) bool, error) {
	last, err := a.lastMessage(ctx, sid)
	if err != nil || last == nil || last.Role != synccore.RoleAgent || last.State == synccore.MessageDone {
		return nil, err
	}
	target := last.MessageID
	return func(m *synccore.Message) bool { return m.MessageID == target }, nil
}

// aguiAnswer answers one resume entry's interaction and returns the
// message it belongs to. resolved answers with the payload (an
// approval's {approved}, a question's {answer}; a bare boolean or string
// is taken as that); cancelled denies an approval and stops the turn
// waiting on a question. One answered already is skipped (a retried run).
func (a *api) aguiAnswer(w http.ResponseWriter, r *http.Request, sid string, e aguiResumeEntry) (*synccore.Message, error) {
	ctx := r.Context()
	if e.InterruptID == "" {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "a resume entry has no interruptId")
	}
	holder, err := a.findMessage(ctx, sid, func(m *synccore.Message) bool {
		for i := range m.Parts {
			if m.Parts[i].Type == synccore.PartInteraction && m.Parts[i].InteractionID == e.InterruptID {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if holder == nil {
		return nil, synccore.Errorf(synccore.CodeNotFound, "interrupt %q is not among the session's latest messages", e.InterruptID)
	}
	kind := ""
	for i := range holder.Parts {
		if holder.Parts[i].InteractionID == e.InterruptID {
			kind = requestField(&holder.Parts[i], "kind")
		}
	}
	var response any
	switch {
	case e.Status == "cancelled" && kind == "approval":
		response = map[string]any{"approved": false}
	case e.Status == "cancelled":
		_, err := a.mgr.Action(ctx, sid, session.Action{ActionType: session.ActionStop})
		_, err = a.writeElsewhere(w, r, err, http.MethodPost, "/v1/chat/"+url.PathEscape(sid)+"/stop", chatStopRequest{MessageID: holder.MessageID}, http.StatusOK, newForwardKey())
		if errors.Is(err, synccore.ErrConflict) {
			err = nil // nothing ran any more
		}
		return holder, err
	case e.Status != "resolved":
		return nil, synccore.Errorf(synccore.CodeBadRequest, "resume status %q is neither resolved nor cancelled", e.Status)
	default:
		response = e.Payload
		switch v := e.Payload.(type) {
		case bool:
			response = map[string]any{"approved": v}
		case string:
			response = map[string]any{"answer": v}
		}
	}
	_, err = a.mgr.Answer(ctx, sid, e.InterruptID, response)
	_, err = a.writeElsewhere(w, r, err, http.MethodPost, "/v1/sessions/"+url.PathEscape(sid)+"/interactions/"+url.PathEscape(e.InterruptID),
		answerRequest{Response: response}, http.StatusOK, newForwardKey())
	var te *synccore.Error
	if errors.As(err, &te) && te.Code == synccore.CodeNotPending {
		err = nil // answered already: the message shows the outcome
	}
	return holder, err
}

// aguiFinish closes what the run opened and ends it: with the pending
// interactions of the followed message as interrupts, else as done.
func (a *api) aguiFinish(em *aguiEmitter, in *aguiInput, followed *synccore.Message) {
	if em.closeAll() != nil {
		return
	}
	ev := aguiEvent{"type": "RUN_FINISHED", "threadId": in.ThreadID, "runId": in.RunID}
	if interrupts := aguiInterrupts(followed); interrupts != nil {
		ev["outcome"] = map[string]any{"type": "interrupt", "interrupts": interrupts}
	} else {
		ev["outcome"] = map[string]any{"type": "success"}
	}
	if em.write(ev) == nil {
		_ = em.flush()
	}
}

// aguiFollow follows the subscription until the reply is done or waits on
// an interaction, as streamUI does for /v1/chat (the same projection, the
// same resubscription after a resync or a gap).
func (a *api) aguiFollow(ctx context.Context, in *aguiInput, sub *subscriber, em *aguiEmitter, isReply func(*synccore.Message) bool, proj *uiProjection) {
	fail := func(err error) {
		a.log.Debug("ag-ui stream ended", "session_id", in.ThreadID, "err", err)
		if ctx.Err() == nil {
			te, _ := asTyped(err)
			_ = em.write(aguiEvent{"type": "RUN_ERROR", "message": te.Error(), "code": string(te.Code)})
			_ = em.flush()
		}
	}
	for {
		frames, err := (*sub).Next(ctx)
		reread, _, ferr := applyUIFrames(proj, frames, isReply)
		if ferr != nil {
			fail(ferr)
			return
		}
		if reread {
			if err := a.resubscribe(ctx, in.ThreadID, sub, proj, isReply); err != nil {
				fail(err)
				return
			}
			continue
		}
		if proj.msg.MessageID != "" {
			if werr := em.emit(&proj.msg); werr != nil {
				a.log.Debug("ag-ui stream write failed", "session_id", in.ThreadID, "err", werr)
				return
			}
			if proj.msg.State == synccore.MessageDone || aguiInterrupts(&proj.msg) != nil {
				a.aguiFinish(em, in, &proj.msg)
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
