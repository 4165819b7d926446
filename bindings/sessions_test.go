package bindings

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// TestSessionsRenameRetryDelete drives what the server offers on a
// session through the Go host, against a real server on loopback: the
// title it sets from the first message, a rename, a retry after a turn
// that failed recoverably, a delete, and the typed not_found after it.
func TestSessionsRenameRetryDelete(t *testing.T) {
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Title != "" || !slices.Contains(sess.Actions, ActionRetry) || len(sess.Models) == 0 {
		t.Fatalf("new session %+v: want no title, actions with retry, models", sess)
	}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Core: core.NewNativeCore()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	// A turn that fails recoverably, then its retry.
	if _, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:error chars=40"}); err != nil {
		t.Fatal(err)
	}
	failed := func(v View) bool {
		last, ok := v.Messages.Last()
		if !ok || last.Role != synccore.RoleAgent || !last.Done() || len(last.Parts) == 0 {
			return false
		}
		p := last.Parts[len(last.Parts)-1]
		return p.Type == synccore.PartError && p.Recoverable
	}
	if err := c.WaitFor(ctx, failed); err != nil {
		t.Fatalf("waiting for the failed turn: %v", err)
	}
	prompt, err := c.Action(ctx, ActionRetry, "")
	if err != nil {
		t.Fatal(err)
	}
	if prompt.Role != synccore.RoleUser || prompt.Visibility != synccore.VisibilityInternal {
		t.Fatalf("retry answered %+v, want the internal recovery prompt", prompt)
	}
	// The retried turn ends with an agent message without an error; the
	// prompt is internal, so the view holds the user message, the failed
	// answer and the new one.
	if err := c.WaitFor(ctx, func(v View) bool {
		last, ok := v.Messages.Last()
		return ok && v.Messages.Len() == 3 && last.Role == synccore.RoleAgent && last.Done() && !failed(v)
	}); err != nil {
		t.Fatalf("waiting for the retried turn: %v", err)
	}
	if _, err := c.Action(ctx, ActionRetry, ""); !errors.Is(err, synccore.ErrConflict) {
		t.Fatalf("a second retry: %v, want conflict", err)
	}

	// The title came from the first message; a rename replaces it.
	list, err := a.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].Title != "scenario:error chars=40" {
		t.Fatalf("sessions: %+v (%v)", list, err)
	}
	renamed, err := c.Rename(ctx, "  Weather in Paris ")
	if err != nil || renamed.Title != "Weather in Paris" || renamed.SessionID != sess.SessionID {
		t.Fatalf("rename: %+v (%v)", renamed, err)
	}
	if _, err := a.RenameSession(ctx, sess.SessionID, " "); !errors.Is(err, synccore.ErrBadRequest) {
		t.Fatalf("an empty title: %v, want bad_request", err)
	}
	if list, err := a.SessionsN(ctx, 1); err != nil || len(list) != 1 || list[0].Title != "Weather in Paris" {
		t.Fatalf("sessions after rename: %+v (%v)", list, err)
	}

	// Delete: the session is gone, and every request about it is a typed
	// not_found the caller tests with errors.Is.
	if err := a.DeleteSession(ctx, sess.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Messages(ctx, sess.SessionID, 0, 0, false); !errors.Is(err, synccore.ErrNotFound) {
		t.Fatalf("messages of a deleted session: %v, want not_found", err)
	}
	if _, err := a.RenameSession(ctx, sess.SessionID, "again"); !errors.Is(err, synccore.ErrNotFound) {
		t.Fatalf("rename of a deleted session: %v, want not_found", err)
	}
	if err := a.DeleteSession(ctx, sess.SessionID); !errors.Is(err, synccore.ErrNotFound) {
		t.Fatalf("a second delete: %v, want not_found", err)
	}
	if list, err := a.Sessions(ctx); err != nil || len(list) != 0 {
		t.Fatalf("sessions after delete: %+v (%v)", list, err)
	}
}

// The interaction helpers are the wire's shapes: an approval's request
// reads back typed, and Approval and Reply are the responses the server
// takes.
func TestInteractionShapesAreTyped(t *testing.T) {
	p := synccore.Part{Type: synccore.PartInteraction, Request: map[string]any{
		"kind": "approval", "tool_call_id": "c1", "tool_name": "send_email", "reason": "tool_requires_approval"}}
	r, ok := httpwire.RequestOf(&p)
	if !ok || r.Kind != httpwire.KindApproval || r.ToolCallID != "c1" || r.ToolName != "send_email" || r.Reason != "tool_requires_approval" {
		t.Fatalf("RequestOf: %+v %v", r, ok)
	}
	if yes := Approval(true); yes.Approved == nil || !*yes.Approved || yes.Answer != nil {
		t.Fatalf("Approval(true) = %+v", yes)
	}
	if no := Approval(false); no.Approved == nil || *no.Approved {
		t.Fatalf("Approval(false) = %+v", no)
	}
	if blue := Reply("blue"); blue.Answer == nil || *blue.Answer != "blue" || blue.Approved != nil {
		t.Fatalf("Reply = %+v", blue)
	}
}
