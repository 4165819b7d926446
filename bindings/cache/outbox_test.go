package cache

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
	"github.com/gorilla/websocket"
)

// startServer is a real server on loopback over a SQLite store whose
// model answers at once.
func startServer(t *testing.T) string {
	t.Helper()
	return startPacedServer(t, model.Speed{})
}

// startPacedServer is startServer with the model paced at speed.
func startPacedServer(t *testing.T, speed model.Speed) string {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "server.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	srv, err := server.New(ctx, server.Config{Store: st, Speed: speed, Logger: quiet, Limits: server.Limits{RequestsPerSecond: -1}})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close(ctx)
		_ = st.Close()
	})
	return hs.URL
}

// TestOutboxAcrossRestartAndOutage: sends queued while the server cannot
// be reached are kept in the cache file; a client started again on that
// file, once the server is reachable, posts them in order, each once, also
// the one whose first post was committed but whose answer was lost.
func TestOutboxAcrossRestartAndOutage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := startServer(t)
	direct := &bindings.API{BaseURL: url}
	sess, err := direct.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if down.Load() {
			return nil, errors.New("test: the server is down")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	cfg := func(f *File) bindings.Config {
		return bindings.Config{BaseURL: url, SessionID: sess.SessionID, Cache: f,
			HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dial}},
			Dialer:     &websocket.Dialer{NetDialContext: dial, HandshakeTimeout: 10 * time.Second}}
	}
	path := filepath.Join(t.TempDir(), "cache.db")

	down.Store(true)
	f1, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := bindings.New(ctx, cfg(f1))
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"first", "second", "third"}
	var keys []string
	for _, s := range texts {
		e, err := c1.Queue(ctx, []synccore.Part{{Type: synccore.PartText, Text: s}}, bindings.SendOptions{})
		if err != nil {
			t.Fatalf("Queue: %v", err)
		}
		keys = append(keys, e.IdempotencyKey)
	}
	if box, err := c1.Outbox(ctx); err != nil || len(box) != 3 {
		t.Fatalf("outbox while down: %d entries, %v", len(box), err)
	}
	// ClearCache drops a send queued meanwhile, and only the cache's.
	other, err := Open(filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.PutOutbox(ctx, "shared", sess.SessionID, bindings.OutboxEntry{ID: "x", IdempotencyKey: "x", State: bindings.OutboxQueued}); err != nil {
		t.Fatal(err)
	}
	_ = c1.Close()
	_ = f1.Close()
	if box, err := other.Outbox(ctx, "shared", sess.SessionID); err != nil || len(box) != 1 {
		t.Fatalf("other cache's outbox: %d entries, %v", len(box), err)
	}
	oc, err := bindings.New(ctx, bindings.Config{BaseURL: url, SessionID: sess.SessionID, Cache: other,
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("test: never reachable")
		}}},
		Dialer: &websocket.Dialer{NetDialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("test: never reachable")
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := oc.ClearCache(ctx); err != nil {
		t.Fatal(err)
	}
	if box, err := oc.Outbox(ctx); err != nil || len(box) != 0 {
		t.Fatalf("outbox after ClearCache: %d entries, %v", len(box), err)
	}
	_ = oc.Close()

	// The first post was committed, its answer lost: the restart posts it
	// again with the same key.
	if _, err := direct.SendWith(ctx, sess.SessionID, []synccore.Part{{Type: synccore.PartText, Text: "first"}}, bindings.SendOptions{IdempotencyKey: keys[0]}); err != nil {
		t.Fatal(err)
	}
	down.Store(false)
	f2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	c2, err := bindings.New(ctx, cfg(f2))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	err = c2.WaitFor(ctx, func(v bindings.View) bool {
		n := 0
		for _, m := range v.Messages.All() {
			if m.Role == synccore.RoleUser {
				n++
			}
		}
		return v.Status == synccore.StatusLive && n >= 3
	})
	if err != nil {
		t.Fatalf("waiting for the queued sends: %v", err)
	}
	for {
		box, err := c2.Outbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(box) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("outbox not drained: %+v", box)
		case <-time.After(20 * time.Millisecond):
		}
	}
	page, err := direct.Messages(ctx, sess.SessionID, 200, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range page.Items {
		if m.Role == synccore.RoleUser {
			got = append(got, m.Parts[0].Text)
		}
	}
	if len(got) != 3 || got[0] != "first" || got[1] != "second" || got[2] != "third" {
		t.Fatalf("user messages on the server %q, want %q once each, in order", got, texts)
	}
}
