package cache

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/synccore"
)

func open(t *testing.T, path string) *File {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func msg(seq int64, state synccore.MessageState) synccore.Message {
	role := synccore.RoleAgent
	if state == "" {
		role = synccore.RoleUser
	}
	return synccore.Message{MessageID: fmt.Sprintf("m%d", seq), SessionID: "s1", Sequence: seq, Revision: 1,
		Role: role, State: state, Visibility: synccore.VisibilityVisible, CreatedAt: 1000 + seq,
		Parts: []synccore.Part{{PartID: fmt.Sprintf("p%d", seq), Sequence: 1, Type: "text", Text: fmt.Sprintf("text %d", seq)}}}
}

// TestFileCacheWindowSurvivesReopen: a window written, trimmed and read
// again after the file is closed and opened (a restart of the program) is
// the one written, oldest first.
func TestFileCacheWindowSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "cache.db")
	f := open(t, path)
	key := bindings.CacheKey{Principal: "sub:alice", SessionID: "s1"}
	if _, ok, err := f.LoadWindow(ctx, key); err != nil || ok {
		t.Fatalf("LoadWindow of nothing: ok %v err %v", ok, err)
	}
	meta := bindings.WindowMeta{Total: 5, HasMoreOlder: true, NextBeforeSequence: 2, SavedAt: 7}
	put := []synccore.Message{msg(4, synccore.MessageDone), msg(2, ""), msg(3, synccore.MessageDone), msg(5, synccore.MessageStreaming)}
	if err := f.WriteWindow(ctx, key, meta, put, 0); err != nil {
		t.Fatalf("WriteWindow: %v", err)
	}
	// A newer revision of 5, and the bound drops 2.
	m5 := msg(5, synccore.MessageDone)
	m5.Revision = 2
	if err := f.WriteWindow(ctx, key, meta, []synccore.Message{m5}, 3); err != nil {
		t.Fatalf("WriteWindow: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g := open(t, path)
	w, ok, err := g.LoadWindow(ctx, key)
	if err != nil || !ok {
		t.Fatalf("LoadWindow after reopen: ok %v err %v", ok, err)
	}
	want := []synccore.Message{msg(3, synccore.MessageDone), msg(4, synccore.MessageDone), m5}
	if !reflect.DeepEqual(w.Messages, want) {
		t.Fatalf("messages %+v\nwant %+v", w.Messages, want)
	}
	if w.Meta != meta {
		t.Fatalf("meta %+v, want %+v", w.Meta, meta)
	}
	// Keys are apart: another principal, or include_internal, sees nothing.
	for _, k := range []bindings.CacheKey{{Principal: "sub:bob", SessionID: "s1"}, {Principal: "sub:alice", SessionID: "s1", IncludeInternal: true}} {
		if _, ok, err := g.LoadWindow(ctx, k); err != nil || ok {
			t.Fatalf("LoadWindow %+v: ok %v err %v", k, ok, err)
		}
	}
	if err := g.DeleteWindow(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := g.LoadWindow(ctx, key); err != nil || ok {
		t.Fatalf("LoadWindow after delete: ok %v err %v", ok, err)
	}
}

// TestFileCacheOutboxAndClear: outbox entries come back in order after a
// reopen, with their keys; Clear of a principal leaves the others'.
func TestFileCacheOutboxAndClear(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "cache.db")
	f := open(t, path)
	for i, id := range []string{"k-c", "k-a", "k-b"} {
		e := bindings.OutboxEntry{ID: id, IdempotencyKey: id, Order: int64(10 + i), State: bindings.OutboxQueued,
			Parts: []synccore.Part{{Type: "text", Text: id}}}
		if err := f.PutOutbox(ctx, "sub:alice", "s1", e); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.PutOutbox(ctx, "sub:bob", "s1", bindings.OutboxEntry{ID: "b", IdempotencyKey: "b", State: bindings.OutboxQueued}); err != nil {
		t.Fatal(err)
	}
	failed := bindings.OutboxEntry{ID: "k-a", IdempotencyKey: "k-a", Order: 11, State: bindings.OutboxFailed, Error: "bad_request",
		Parts: []synccore.Part{{Type: "text", Text: "k-a"}}}
	if err := f.PutOutbox(ctx, "sub:alice", "s1", failed); err != nil {
		t.Fatal(err)
	}
	if err := f.DeleteOutbox(ctx, "sub:alice", "s1", "k-b"); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPrincipal(ctx, "sub:alice"); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteWindow(ctx, bindings.CacheKey{Principal: "sub:bob", SessionID: "s1"}, bindings.WindowMeta{Total: 1}, []synccore.Message{msg(1, "")}, 0); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	g := open(t, path)
	got, err := g.Outbox(ctx, "sub:alice", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "k-c" || got[1].ID != "k-a" || got[1].State != bindings.OutboxFailed || got[1].Error != "bad_request" || got[1].Parts[0].Text != "k-a" {
		t.Fatalf("outbox %+v, want k-c then the failed k-a", got)
	}
	if p, err := g.Principal(ctx); err != nil || p != "sub:alice" {
		t.Fatalf("Principal %q %v", p, err)
	}
	if err := g.Clear(ctx, "sub:alice"); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Outbox(ctx, "sub:alice", "s1"); len(got) != 0 {
		t.Fatalf("alice's outbox after Clear: %+v", got)
	}
	if got, _ := g.Outbox(ctx, "sub:bob", "s1"); len(got) != 1 {
		t.Fatalf("bob's outbox after alice's Clear: %+v", got)
	}
	if err := g.Clear(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := g.LoadWindow(ctx, bindings.CacheKey{Principal: "sub:bob", SessionID: "s1"}); ok {
		t.Fatal("a window after Clear of all")
	}
	if p, _ := g.Principal(ctx); p != "" {
		t.Fatalf("principal %q after Clear of all", p)
	}
}

// TestFileCacheMaxSessions: past MaxSessions windows, the least recently
// written go, messages with them.
func TestFileCacheMaxSessions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := open(t, filepath.Join(t.TempDir(), "cache.db"))
	f.MaxSessions = 2
	for _, s := range []string{"a", "b", "c"} {
		if err := f.WriteWindow(ctx, bindings.CacheKey{Principal: "p", SessionID: s}, bindings.WindowMeta{Total: 1}, []synccore.Message{msg(1, "")}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for s, want := range map[string]bool{"a": false, "b": true, "c": true} {
		w, ok, err := f.LoadWindow(ctx, bindings.CacheKey{Principal: "p", SessionID: s})
		if err != nil || ok != want || ok && len(w.Messages) != 1 {
			t.Fatalf("window %s: ok %v (want %v) err %v", s, ok, want, err)
		}
	}
	var orphans int64
	_ = f.run(ctx, func(db *sqliteConn) error {
		return exec(db, `SELECT count(*) FROM messages WHERE session_id = 'a'`, func(st *sqliteStmt) error { orphans = st.ColumnInt64(0); return nil })
	})
	if orphans != 0 {
		t.Fatalf("%d messages of a dropped window are left", orphans)
	}
}
