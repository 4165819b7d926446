package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// testSessionTitleRenameDelete: the first visible user message names the
// session, later ones do not, a rename wins and is not activity, and a
// delete removes the session with its messages.
func testSessionTitleRenameDelete(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	for i, id := range []string{"a", "b"} {
		if err := s.CreateSession(ctx, store.Session{SessionID: id, Model: "m", CreatedAt: int64(1000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	internal := UserMessage("a", 1, "recovery prompt")
	internal.Visibility = synccore.VisibilityInternal
	MustCommit(t, s, "a", internal)
	if got, _ := s.Session(ctx, "a"); got.Title != "" {
		t.Fatalf("an internal message named the session: %q", got.Title)
	}
	MustCommit(t, s, "a", UserMessage("a", 2, "  Plan a trip\nto Oslo "), AgentMessage("a", 3))
	MustCommit(t, s, "a", UserMessage("a", 4, "second prompt"))
	got, _ := s.Session(ctx, "a")
	if got.Title != "Plan a trip to Oslo" {
		t.Fatalf("title = %q", got.Title)
	}
	// a was active last: it comes first although b is newer.
	list, _ := s.ListSessions(ctx, 0)
	if len(list) != 2 || list[0].SessionID != "a" {
		t.Fatalf("not sorted by last activity: %+v", list)
	}

	before := got.UpdatedAt
	renamed, err := s.RenameSession(ctx, "a", "  Oslo trip ")
	if err != nil || renamed.Title != "Oslo trip" || renamed.UpdatedAt != before {
		t.Fatalf("rename = %+v, %v", renamed, err)
	}
	MustCommit(t, s, "a", UserMessage("a", 5, "another"))
	if got, _ := s.Session(ctx, "a"); got.Title != "Oslo trip" {
		t.Fatalf("a message replaced the chosen title: %q", got.Title)
	}
	_, err = s.RenameSession(ctx, "a", " \n ")
	WantCode(t, err, synccore.CodeBadRequest)
	_, err = s.RenameSession(ctx, "a", strings.Repeat("x", store.MaxTitleRunes+1))
	WantCode(t, err, synccore.CodeBadRequest)
	_, err = s.RenameSession(ctx, "zz", "x")
	WantCode(t, err, synccore.CodeNotFound)

	if err := s.PutSummary(ctx, "a", store.Summary{FromSequence: 1, ToSequence: 3, Text: "a trip", Model: "m", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Session(ctx, "a")
	WantCode(t, err, synccore.CodeNotFound)
	_, err = s.Messages(ctx, "a", store.PageQuery{Limit: 10})
	WantCode(t, err, synccore.CodeNotFound)
	WantCode(t, s.DeleteSession(ctx, "a"), synccore.CodeNotFound)
	if list, _ := s.ListSessions(ctx, 0); len(list) != 1 || list[0].SessionID != "b" {
		t.Fatalf("after delete: %+v", list)
	}
	// Its id can be used again: nothing of it is left.
	if err := s.CreateSession(ctx, store.Session{SessionID: "a", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if page, err := s.Messages(ctx, "a", store.PageQuery{Limit: 10}); err != nil || len(page.Items) != 0 || page.Total != 0 {
		t.Fatalf("recreated session: %+v, %v", page, err)
	}
	if _, ok, err := s.LatestSummary(ctx, "a"); err != nil || ok {
		t.Fatalf("recreated session has the deleted one's summary: %v, %v", ok, err)
	}
}
