package storetest

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/server/store"
)

func testSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")

	_, err := s.Session(ctx, "nope")
	WantCode(t, err, "not_found")
	WantCode(t, s.CreateSession(ctx, store.Session{}), "bad_request")

	for i, id := range []string{"a", "b", "c"} {
		if err := s.CreateSession(ctx, store.Session{SessionID: id, Model: "m", CreatedAt: int64(1000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	WantCode(t, s.CreateSession(ctx, store.Session{SessionID: "b"}), "conflict")

	list, err := s.ListSessions(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].SessionID != "c" || list[2].SessionID != "a" {
		t.Fatalf("ListSessions = %+v, want c, b, a", list)
	}
	if list, _ := s.ListSessions(ctx, 2); len(list) != 2 {
		t.Fatalf("ListSessions(2) returned %d", len(list))
	}

	got, err := s.Session(ctx, "b")
	if err != nil || got.Model != "m" || got.CreatedAt != 1001 || got.UpdatedAt != 1001 || got.HeadSequence != 0 {
		t.Fatalf("Session(b) = %+v, %v", got, err)
	}

	if err := s.UpdateSession(ctx, store.Session{SessionID: "b", Model: "m2", ApprovalMode: "auto", UpdatedAt: 5000}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Session(ctx, "b")
	if got.Model != "m2" || got.ApprovalMode != "auto" || got.UpdatedAt != 5000 || got.CreatedAt != 1001 {
		t.Fatalf("after update: %+v", got)
	}
	WantCode(t, s.UpdateSession(ctx, store.Session{SessionID: "zz"}), "not_found")

	MustCommit(t, s, "b", UserMessage("b", 1, "hi"), AgentMessage("b", 2))
	got, _ = s.Session(ctx, "b")
	if got.HeadSequence != 2 || got.UpdatedAt < 5000 {
		t.Fatalf("after commit: %+v", got)
	}
}

func testEmptyListSessionsIsNotNil(t *testing.T, open Opener) {
	s := open(t, "main")
	list, err := s.ListSessions(context.Background(), 10)
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ListSessions on empty store = %#v, %v", list, err)
	}
}
