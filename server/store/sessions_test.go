package store

import (
	"context"
	"testing"
)

func TestSessions(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)

	_, err := s.Session(ctx, "nope")
	wantCode(t, err, "not_found")
	wantCode(t, s.CreateSession(ctx, Session{}), "bad_request")

	for i, id := range []string{"a", "b", "c"} {
		if err := s.CreateSession(ctx, Session{SessionID: id, Model: "m", CreatedAt: int64(1000 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, s.CreateSession(ctx, Session{SessionID: "b"}), "conflict")

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

	if err := s.UpdateSession(ctx, Session{SessionID: "b", Model: "m2", ApprovalMode: "auto", UpdatedAt: 5000}); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Session(ctx, "b")
	if got.Model != "m2" || got.ApprovalMode != "auto" || got.UpdatedAt != 5000 || got.CreatedAt != 1001 {
		t.Fatalf("after update: %+v", got)
	}
	wantCode(t, s.UpdateSession(ctx, Session{SessionID: "zz"}), "not_found")

	mustCommit(t, s, "b", userMsg("b", 1, "hi"), agentMsg("b", 2))
	got, _ = s.Session(ctx, "b")
	if got.HeadSequence != 2 || got.UpdatedAt < 5000 {
		t.Fatalf("after commit: %+v", got)
	}
}

func TestEmptyListSessionsIsNotNil(t *testing.T) {
	s, _ := openTest(t)
	list, err := s.ListSessions(context.Background(), 10)
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ListSessions on empty store = %#v, %v", list, err)
	}
}
