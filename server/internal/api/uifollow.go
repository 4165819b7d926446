package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Following one reply through a subscription for the AI SDK endpoints.

// lastMessage is the session's newest message, or nil.
func (a *api) lastMessage(ctx context.Context, sessionID string) (*synccore.Message, error) {
	page, err := a.mgr.Messages(ctx, sessionID, store.PageQuery{Limit: 1})
	if err != nil || len(page.Items) == 0 {
		return nil, err
	}
	return &page.Items[len(page.Items)-1], nil
}

// findMessage is the oldest of the session's latest messages (a reply the
// client follows is one of them) that match, or nil.
func (a *api) findMessage(ctx context.Context, sessionID string, match func(*synccore.Message) bool) (*synccore.Message, error) {
	page, err := a.mgr.Messages(ctx, sessionID, store.PageQuery{Limit: recentMessages})
	if err != nil {
		return nil, err
	}
	for i := range page.Items {
		if match(&page.Items[i]) {
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
		reread, _, ferr := applyUIFrames(&proj, frames, isReply)
		if ferr != nil {
			fail(ferr)
			return
		}
		if reread {
			if err := a.resubscribe(ctx, sessionID, sub, &proj, isReply); err != nil {
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
// followed message from the snapshot. If the reply was not seen yet, it is
// looked for there too: the lost frames may have been its start, or all of
// it. The new subscription is open before the read, so nothing after the
// snapshot is missed.
func (a *api) resubscribe(ctx context.Context, sessionID string, sub *subscriber, proj *uiProjection, isReply func(*synccore.Message) bool) error {
	a.log.Debug("ui stream resubscribes", "session_id", sessionID, "message_id", proj.msg.MessageID)
	(*sub).Close()
	next, err := a.openSub(ctx, sessionID)
	if err != nil {
		return fmt.Errorf("resubscribe: %w", err)
	}
	*sub = next
	m, err := a.findMessage(ctx, sessionID, func(m *synccore.Message) bool {
		if proj.msg.MessageID == "" {
			return isReply(m)
		}
		return m.MessageID == proj.msg.MessageID
	})
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
