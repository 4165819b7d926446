package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

func isCode(err error, code string) bool {
	var e *synccore.Error
	return errors.As(err, &e) && e.Code == code
}

// Shares are found by their token's hash, listed per session, revoked
// once, and go with their session; a second node sees what the first
// wrote.
func testShares(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s1")
	NewSession(t, s, "s2")
	if err := s.CreateShare(ctx, store.Share{ShareID: "h1", SessionID: "nope", TokenHash: []byte("t0"), Mode: store.ShareRead}); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("share of an unknown session: %v, want not_found", err)
	}
	if err := s.CreateShare(ctx, store.Share{ShareID: "", SessionID: "s1", TokenHash: []byte("t0")}); !isCode(err, synccore.CodeBadRequest) {
		t.Fatalf("empty share id: %v, want bad_request", err)
	}
	want := store.Share{ShareID: "h1", SessionID: "s1", TokenHash: []byte("t1"), Mode: store.ShareRead, IncludeForks: true, ExpiresAt: 99, CreatedAt: 10, CreatedBy: "alice"}
	if err := s.CreateShare(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateShare(ctx, store.Share{ShareID: "h2", SessionID: "s1", TokenHash: []byte("t2"), Mode: store.ShareWrite, CreatedAt: 11}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateShare(ctx, store.Share{ShareID: "h3", SessionID: "s2", TokenHash: []byte("t1"), Mode: store.ShareRead}); !isCode(err, synccore.CodeConflict) {
		t.Fatalf("token hash reused: %v, want conflict", err)
	}
	if err := s.CreateShare(ctx, store.Share{ShareID: "h1", SessionID: "s2", TokenHash: []byte("t3"), Mode: store.ShareRead}); !isCode(err, synccore.CodeConflict) {
		t.Fatalf("share id reused: %v, want conflict", err)
	}
	other := open(t, "main") // another node on the same data
	got, err := other.ShareByToken(ctx, []byte("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.ShareID != want.ShareID || got.SessionID != want.SessionID || string(got.TokenHash) != "t1" || got.Mode != want.Mode ||
		!got.IncludeForks || got.ExpiresAt != 99 || got.CreatedAt != 10 || got.CreatedBy != "alice" {
		t.Fatalf("ShareByToken = %+v, want %+v", got, want)
	}
	if _, err := s.ShareByToken(ctx, []byte("t9")); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("unknown token: %v, want not_found", err)
	}
	list, err := s.ListShares(ctx, "s1")
	if err != nil || len(list) != 2 || list[0].ShareID != "h1" || list[1].ShareID != "h2" {
		t.Fatalf("ListShares(s1) = %+v, %v; want h1, h2", list, err)
	}
	if list, err := s.ListShares(ctx, "s2"); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ListShares(s2) = %#v, %v; want empty, not nil", list, err)
	}
	if err := s.DeleteShare(ctx, "s2", "h1"); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("revoking through another session: %v, want not_found", err)
	}
	if err := s.DeleteShare(ctx, "s1", "h1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteShare(ctx, "s1", "h1"); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("revoking twice: %v, want not_found", err)
	}
	if _, err := other.ShareByToken(ctx, []byte("t1")); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("revoked token: %v, want not_found", err)
	}
	if err := s.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ShareByToken(ctx, []byte("t2")); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("token of a deleted session: %v, want not_found", err)
	}
	if list, err := s.ListShares(ctx, "s1"); err != nil || len(list) != 0 {
		t.Fatalf("shares of a deleted session: %+v, %v", list, err)
	}
}

// Members are added, re-roled, listed, removed, and go with their session.
func testMembers(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s1")
	if err := s.PutMember(ctx, store.Member{SessionID: "nope", Principal: "bob", Role: store.RoleViewer}); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("member of an unknown session: %v, want not_found", err)
	}
	if err := s.PutMember(ctx, store.Member{SessionID: "s1", Principal: "bob", Role: store.RoleViewer, CreatedAt: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutMember(ctx, store.Member{SessionID: "s1", Principal: "carol", Role: store.RoleEditor, CreatedAt: 6}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutMember(ctx, store.Member{SessionID: "s1", Principal: "bob", Role: store.RoleEditor, CreatedAt: 7}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Member(ctx, "s1", "bob")
	if err != nil || m.Role != store.RoleEditor || m.CreatedAt != 5 || m.Principal != "bob" || m.SessionID != "s1" {
		t.Fatalf("Member(bob) = %+v, %v; want editor since 5", m, err)
	}
	if _, err := s.Member(ctx, "s1", "dave"); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("unknown member: %v, want not_found", err)
	}
	list, err := s.ListMembers(ctx, "s1")
	if err != nil || len(list) != 2 || list[0].Principal != "bob" || list[1].Principal != "carol" {
		t.Fatalf("ListMembers = %+v, %v", list, err)
	}
	if err := s.DeleteMember(ctx, "s1", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMember(ctx, "s1", "bob"); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("removing twice: %v, want not_found", err)
	}
	if err := s.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Member(ctx, "s1", "carol"); !isCode(err, synccore.CodeNotFound) {
		t.Fatalf("member of a deleted session: %v, want not_found", err)
	}
}
