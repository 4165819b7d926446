package bindings

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// listWatch keeps every list WatchSessions handed over.
type listWatch struct {
	mu    sync.Mutex
	lists [][]Session
	ch    chan struct{} // pinged after each list
}

func (w *listWatch) onList(l []Session) {
	w.mu.Lock()
	w.lists = append(w.lists, l)
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// waitFor waits until a list handed over at or after index from holds;
// it returns the index after that list.
func (w *listWatch) waitFor(t *testing.T, what string, from int, ok func([]Session) bool) int {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		for i := from; i < len(w.lists); i++ {
			if ok(w.lists[i]) {
				w.mu.Unlock()
				return i + 1
			}
		}
		from = len(w.lists)
		last := []Session(nil)
		if n := len(w.lists); n > 0 {
			last = w.lists[n-1]
		}
		w.mu.Unlock()
		select {
		case <-w.ch:
		case <-deadline:
			t.Fatalf("the session list never showed %s; last list %+v", what, last)
		}
	}
}

func find(l []Session, id string) (Session, bool) {
	for _, s := range l {
		if s.SessionID == id {
			return s, true
		}
	}
	return Session{}, false
}

// TestWatchSessions follows the session list of the Go host against a
// real server (docs/protocol.md §4.7), through a proxy that is cut: every
// change made over HTTP (create, a turn's running and idle, rename, fork,
// delete) reaches the list, newest activity first, and after a cut the
// watcher reconnects by itself and its whole list again holds what
// changed while it was away.
func TestWatchSessions(t *testing.T) {
	t.Parallel()
	srv := startServer(t, model.Speed{Delta: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	before, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, srv.URL[len("http://"):])
	w := &listWatch{ch: make(chan struct{}, 1)}
	watchCtx, stopWatch := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- (&API{BaseURL: "http://" + p.addr}).WatchSessions(watchCtx, w.onList) }()

	at := w.waitFor(t, "the session made before it", 0, func(l []Session) bool {
		_, ok := find(l, before.SessionID)
		return len(l) == 1 && ok
	})
	s, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	at = w.waitFor(t, "a new session first", at, func(l []Session) bool {
		return len(l) == 2 && l[0].SessionID == s.SessionID
	})
	if _, err := a.Send(ctx, s.SessionID, synccore.Part{Type: synccore.PartText, Text: "scenario:text chars=40 delta=4"}); err != nil {
		t.Fatal(err)
	}
	at = w.waitFor(t, "the turn running", at, func(l []Session) bool {
		got, _ := find(l, s.SessionID)
		return got.Running
	})
	at = w.waitFor(t, "the turn ended, the title set", at, func(l []Session) bool {
		got, _ := find(l, s.SessionID)
		return !got.Running && got.HeadSequence == 2 && got.Title != ""
	})
	if _, err := a.RenameSession(ctx, s.SessionID, "renamed"); err != nil {
		t.Fatal(err)
	}
	at = w.waitFor(t, "the new title", at, func(l []Session) bool {
		got, _ := find(l, s.SessionID)
		return got.Title == "renamed"
	})
	fork, err := a.Fork(ctx, s.SessionID, 2, ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at = w.waitFor(t, "the fork, in the same conversation", at, func(l []Session) bool {
		got, ok := find(l, fork.SessionID)
		return ok && got.RootSessionID == s.SessionID && got.ParentSessionID == s.SessionID
	})
	if err := a.DeleteSession(ctx, before.SessionID); err != nil {
		t.Fatal(err)
	}
	at = w.waitFor(t, "the deleted session gone", at, func(l []Session) bool {
		_, ok := find(l, before.SessionID)
		return !ok && len(l) == 2
	})

	// Cut: a session made while the watcher is away is in the whole list
	// it reads again when the proxy is back.
	p.down()
	away, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	p.up(t)
	w.waitFor(t, "the session made during the cut", at, func(l []Session) bool {
		_, ok := find(l, away.SessionID)
		return ok && len(l) == 3 && l[0].SessionID == away.SessionID
	})
	stopWatch()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("WatchSessions after its context ended: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WatchSessions did not return after its context ended")
	}
}

// TestWatchSessionsRefused: a token the server refuses ends WatchSessions
// at once with unauthorized (no retry for ever), and another principal's
// sessions are never in a principal's list.
func TestWatchSessionsRefused(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "list.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]string{"tok-ann": "ann", "tok-bob": "bob"}
	authz := auth.Func(func(_ *http.Request, token string) (string, error) {
		if who, ok := users[token]; ok {
			return who, nil
		}
		return "", auth.ErrUnauthorized
	})
	srv, err := server.New(ctx, server.Config{Store: st, Logger: quiet, Authorizer: authz})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); _ = srv.Close(ctx); _ = st.Close() })

	err = (&API{BaseURL: hs.URL, Token: "wrong"}).WatchSessions(ctx, func([]Session) {
		t.Error("a refused watcher was handed a list")
	})
	if !errors.Is(err, synccore.ErrUnauthorized) {
		t.Fatalf("WatchSessions with a refused token: %v, want unauthorized", err)
	}

	ann, bob := &API{BaseURL: hs.URL, Token: "tok-ann"}, &API{BaseURL: hs.URL, Token: "tok-bob"}
	if _, err := bob.CreateSession(ctx, ""); err != nil {
		t.Fatal(err)
	}
	w := &listWatch{ch: make(chan struct{}, 1)}
	go func() { _ = ann.WatchSessions(ctx, w.onList) }()
	at := w.waitFor(t, "ann's empty list", 0, func(l []Session) bool { return len(l) == 0 })
	mine, err := ann.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.CreateSession(ctx, ""); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "ann's own session", at, func(l []Session) bool { return len(l) == 1 && l[0].SessionID == mine.SessionID })
	// bob's second session, made before ann's list above was handed
	// over or after it, must never show: wait a little for a stray upsert.
	time.Sleep(200 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lists {
		if len(l) > 1 {
			t.Fatalf("ann's list holds another principal's session: %+v", l)
		}
	}
}
