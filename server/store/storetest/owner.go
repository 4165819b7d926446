package storetest

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/server/store"
)

// A session keeps the owner it was created with, and an owner's listing
// holds its sessions only, newest first.
func testListOwnedSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	for i, o := range []struct{ id, owner string }{{"a1", "alice"}, {"b1", "bob"}, {"a2", "alice"}, {"shared", ""}} {
		if err := s.CreateSession(ctx, store.Session{SessionID: o.id, Model: "m", ApprovalMode: "auto", Owner: o.owner, CreatedAt: int64(100 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	for owner, want := range map[string][]string{"alice": {"a2", "a1"}, "bob": {"b1"}, "": {"shared"}, "carol": {}} {
		got, err := s.ListOwnedSessions(ctx, owner, 0)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, g := range got {
			ids = append(ids, g.SessionID)
			if g.Owner != owner {
				t.Errorf("owner %q listing holds %s of %q", owner, g.SessionID, g.Owner)
			}
		}
		if len(ids) != len(want) || (len(ids) > 0 && ids[0] != want[0]) {
			t.Errorf("owner %q: sessions %v, want %v", owner, ids, want)
		}
	}
	got, err := s.Session(ctx, "b1")
	if err != nil || got.Owner != "bob" {
		t.Fatalf("Session(b1) = %+v, %v; want owner bob", got, err)
	}
	all, err := s.ListSessions(ctx, 0)
	if err != nil || len(all) != 4 {
		t.Fatalf("ListSessions: %d sessions, %v; want 4", len(all), err)
	}
}
