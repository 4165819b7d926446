package bindings

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
	"github.com/gorilla/websocket"
)

// The failures of issue 26, point 7, against the real server: each one is
// told at once, typed, and the controls (Reconnect, TokenSource) act.

// An unknown session is a terminal not_found at once: Dial does not wait
// for its context (30 s here, as the old host did).
func TestDialUnknownSessionIsNotFound(t *testing.T) {
	t.Parallel()
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: "ses_nobody", Runtime: testRuntime(t)})
	if !errors.Is(err, synccore.ErrNotFound) || Retryable(err) {
		t.Fatalf("Dial of an unknown session: %v, want a final not_found", err)
	}
	t.Logf("not_found after %v", time.Since(start))
}

// A session deleted under a live client ends it with not_found (Err, the
// last view's Cause), instead of reconnecting for ever.
func TestDeletedSessionEndsTheClient(t *testing.T) {
	t.Parallel()
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Runtime: testRuntime(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := a.DeleteSession(ctx, sess.SessionID); err != nil {
		t.Fatal(err)
	}
	err = c.WaitFor(ctx, func(View) bool { return false })
	if !errors.Is(err, synccore.ErrNotFound) || !errors.Is(c.Err(), synccore.ErrNotFound) {
		t.Fatalf("after delete: WaitFor %v, Err %v; want not_found", err, c.Err())
	}
	if v := c.View(); v.Status != synccore.StatusClosed || !errors.Is(v.Cause, synccore.ErrNotFound) {
		t.Fatalf("last view: status %s cause %v", v.Status, v.Cause)
	}
}

// A refused port is a typed, retryable network error on Dial, and a status
// with its cause on a client made by New.
func TestRefusedConnectionIsTypedAndRetryable(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Dial(ctx, Config{BaseURL: "http://" + addr, SessionID: "s1", Core: core.NewNativeCore()})
	var ne *NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, ErrNetwork) || !Retryable(err) || ctx.Err() != nil {
		t.Fatalf("Dial of a refused port: %v, want a retryable *NetworkError before the context ends", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Fatalf("Dial: %v does not wrap the transport's error", err)
	}

	c, err := New(ctx, Config{BaseURL: "http://" + addr, SessionID: "s1", Core: core.NewNativeCore()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitFor(ctx, func(v View) bool {
		return v.Status == synccore.StatusBackoff && errors.Is(v.Cause, ErrNetwork) && v.Reason != ""
	}); err != nil {
		t.Fatalf("New on a refused port: %v (view %+v)", err, c.View())
	}
	// A network error in a call is typed too.
	if _, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "hi"}); !errors.Is(err, ErrNetwork) {
		t.Fatalf("Send to a refused port: %v, want network", err)
	}
}

// switchableProxy forwards TCP to target while up; down refuses every
// connection (the listener is closed) and cuts the open ones.
type switchableProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]struct{}
}

func newProxy(t *testing.T, target string) *switchableProxy {
	p := &switchableProxy{addr: freeAddr(t), target: target, conns: map[net.Conn]struct{}{}}
	p.up(t)
	t.Cleanup(p.down)
	return p
}

func (p *switchableProxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy listen again on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns[in], p.conns[out] = struct{}{}, struct{}{}
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
}

func (p *switchableProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// After an outage long enough for the backoff to grow past several
// seconds, Reconnect brings the client back at once: live well before the
// pending backoff (8 s at the least) could have.
func TestReconnectAfterOutage(t *testing.T) {
	t.Parallel()
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := (&API{BaseURL: srv.URL}).CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, srv.URL[len("http://"):])
	var dials atomic.Int64
	d := *websocket.DefaultDialer
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c, err := Dial(ctx, Config{BaseURL: "http://" + p.addr, SessionID: sess.SessionID, Runtime: testRuntime(t), Dialer: &d})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p.down()
	// Wait until the backoff has grown: the 7th attempt since the client
	// was live waits 250 ms << 6 = 16 s, halved at the least jitter: 8 s.
	// (A view per status is not promised: connecting and backoff may
	// coalesce, so the dials are counted.)
	for dials.Load() < 7 || c.Status() != synccore.StatusBackoff {
		select {
		case <-ctx.Done():
			t.Fatalf("%d dials after the outage began, status %s", dials.Load(), c.Status())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if v := c.View(); !errors.Is(v.Cause, ErrNetwork) {
		t.Fatalf("in backoff: cause %v, want network", v.Cause)
	}
	p.up(t)
	start := time.Now()
	back, cancelBack := context.WithTimeout(ctx, 6*time.Second)
	defer cancelBack()
	if err := c.Reconnect(back); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(back, func(v View) bool { return v.Status == synccore.StatusLive }); err != nil {
		t.Fatalf("not live 6 s after Reconnect: %v (%+v)", err, c.View())
	}
	t.Logf("live %v after Reconnect", time.Since(start))
	if v := c.View(); v.Cause != nil {
		t.Fatalf("live with cause %v", v.Cause)
	}
}

// tokenServer is the real server whose Authorizer admits the tokens in
// valid; revoke expires one.
type tokenServer struct {
	*testServer
	mu    sync.Mutex
	valid map[string]bool
	seen  []string
}

func startTokenServer(t *testing.T, tokens ...string) *tokenServer {
	ts := &tokenServer{valid: map[string]bool{}}
	for _, tok := range tokens {
		ts.valid[tok] = true
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tok.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{Store: st, Speed: model.Speed{}, Logger: quiet,
		Authorizer: auth.Func(func(_ *http.Request, tok string) (string, error) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			ts.seen = append(ts.seen, tok)
			if !ts.valid[tok] {
				return "", auth.ErrUnauthorized
			}
			return auth.Shared, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close(ctx)
		_ = st.Close()
	})
	ts.testServer = &testServer{URL: hs.URL, srv: srv}
	return ts
}

func (ts *tokenServer) set(tok string, ok bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.valid[tok] = ok
}

func (ts *tokenServer) lastSeen() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.seen[len(ts.seen)-1]
}

// A token that expires mid-session: without a TokenSource the client ends
// with unauthorized at its next reconnect; with one, the new token is used
// for the subscription and for HTTP, and the client goes on.
func TestTokenExpiresMidSession(t *testing.T) {
	t.Parallel()
	ts := startTokenServer(t, "t1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := (&API{BaseURL: ts.URL, Token: "t1"}).CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("static token", func(t *testing.T) {
		c, err := Dial(ctx, Config{BaseURL: ts.URL, SessionID: sess.SessionID, Token: "t1", Runtime: testRuntime(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ts.set("t1", false)
		defer ts.set("t1", true)
		if err := c.cutConnection(ctx); err != nil {
			t.Fatal(err)
		}
		err = c.WaitFor(ctx, func(View) bool { return false })
		if !errors.Is(err, synccore.ErrUnauthorized) || !errors.Is(c.Err(), synccore.ErrUnauthorized) {
			t.Fatalf("after the token expired: %v (Err %v), want unauthorized", err, c.Err())
		}
		// Dial with it is a final unauthorized at once too.
		if _, err := Dial(ctx, Config{BaseURL: ts.URL, SessionID: sess.SessionID, Token: "t1", Runtime: testRuntime(t)}); !errors.Is(err, synccore.ErrUnauthorized) {
			t.Fatalf("Dial with an expired token: %v", err)
		}
	})

	t.Run("token source", func(t *testing.T) {
		var mu sync.Mutex
		current := "t1"
		var calls int
		src := TokenFunc(func(context.Context) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return current, nil
		})
		c, err := Dial(ctx, Config{BaseURL: ts.URL, SessionID: sess.SessionID, TokenSource: src, Runtime: testRuntime(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// t1 expires; the source now gives t2.
		ts.set("t2", true)
		ts.set("t1", false)
		mu.Lock()
		current = "t2"
		mu.Unlock()
		if err := c.cutConnection(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitFor(ctx, func(v View) bool { return v.Status == synccore.StatusBackoff || v.Status == synccore.StatusConnecting }); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitFor(ctx, func(v View) bool { return v.Status == synccore.StatusLive }); err != nil {
			t.Fatalf("with a token source: %v (Err %v)", err, c.Err())
		}
		if got := ts.lastSeen(); got != "t2" {
			t.Fatalf("the subscription used %q, want t2", got)
		}
		if _, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "still me"}); err != nil {
			t.Fatalf("Send with the new token: %v", err)
		}
		if got := ts.lastSeen(); got != "t2" {
			t.Fatalf("Send used %q, want t2", got)
		}
		// A source that gives the refused token again: final unauthorized.
		ts.set("t2", false)
		if _, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "refused"}); !errors.Is(err, synccore.ErrUnauthorized) {
			t.Fatalf("Send with a refused token and no new one: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if calls < 2 {
			t.Fatalf("the token source was called %d times", calls)
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
