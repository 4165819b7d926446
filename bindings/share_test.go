package bindings

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// A client opened with a write link's token follows the session and
// posts as the link (its message says so); revoking the link ends the
// client (the typed close, then the refused token), not the owner's.
func TestShareLinkClient(t *testing.T) {
	t.Parallel()
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	owner := &API{BaseURL: srv.URL}
	s, err := owner.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Send(ctx, s.SessionID, synccore.Part{Type: synccore.PartText, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	sh, err := owner.CreateShare(ctx, s.SessionID, ShareOptions{Mode: ShareWrite})
	if err != nil || sh.Token == "" {
		t.Fatalf("CreateShare = %+v, %v", sh, err)
	}
	if list, err := owner.Shares(ctx, s.SessionID); err != nil || len(list) != 1 || list[0].ShareID != sh.ShareID || list[0].Token != "" {
		t.Fatalf("Shares = %+v, %v", list, err)
	}
	c, err := New(ctx, Config{BaseURL: srv.URL, SessionID: s.SessionID, Token: sh.Token, Runtime: testRuntime(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "from the link"})
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := Author(m); !ok || a.ShareID != sh.ShareID {
		t.Fatalf("Author = %+v, %v; want share %s", a, ok, sh.ShareID)
	}
	if err := c.WaitFor(ctx, func(v View) bool {
		for _, m := range v.Messages.All() {
			if a, ok := Author(*m); ok && a.ShareID == sh.ShareID {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.API().CreateShare(ctx, s.SessionID, ShareOptions{}); !errors.Is(err, synccore.ErrForbidden) {
		t.Fatalf("a link making a link: %v, want forbidden", err)
	}
	if err := owner.RevokeShare(ctx, s.SessionID, sh.ShareID); err != nil {
		t.Fatal(err)
	}
	err = c.WaitFor(ctx, func(View) bool { return false })
	if !errors.Is(err, synccore.ErrUnauthorized) {
		t.Fatalf("after the revoke: %v, want the client ended unauthorized", err)
	}
	if members, err := owner.Members(ctx, s.SessionID); err != nil || len(members) != 1 || members[0].Role != RoleOwner {
		t.Fatalf("Members = %+v, %v", members, err)
	}
}
