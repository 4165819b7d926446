package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// probeBody is the body of /livez and /readyz.
type probeBody struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	} `json:"checks"`
}

// probe GETs path with no credentials (a load balancer has none).
func probe(t *testing.T, base, path string) (int, probeBody) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var b probeBody
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatalf("GET %s: %d, body: %v", path, resp.StatusCode, err)
	}
	return resp.StatusCode, b
}

// failing names the checks of b that are not OK.
func failing(b probeBody) map[string]string {
	out := map[string]string{}
	for _, c := range b.Checks {
		if !c.OK {
			out[c.Name] = c.Error
		}
	}
	return out
}

// Liveness and readiness answer without a token; readiness goes false
// (503, check "serving") once Close begins draining and stays so, while
// liveness stays 200; a closed store fails the "store" check.
func TestProbes(t *testing.T) {
	t.Parallel()
	s := start(t, "", byHeaderConfig())
	if st, b := probe(t, s.http.URL, "/livez"); st != http.StatusOK || !b.OK {
		t.Fatalf("livez: %d %+v", st, b)
	}
	st, b := probe(t, s.http.URL, "/readyz")
	if st != http.StatusOK || !b.OK || len(failing(b)) != 0 {
		t.Fatalf("readyz: %d %+v", st, b)
	}
	names := map[string]bool{}
	for _, c := range b.Checks {
		names[c.Name] = true
	}
	if !names["serving"] || !names["store"] || names["transport"] {
		t.Fatalf("readyz checks %+v, want serving and store (no transport on one node)", b.Checks)
	}
	// The API itself still wants a principal.
	if a := s.call(nil, "", "GET", "/v1/sessions", ""); a.status != http.StatusUnauthorized {
		t.Fatalf("GET /v1/sessions without a user: %d", a.status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st, b = probe(t, s.http.URL, "/readyz")
	if f := failing(b); st != http.StatusServiceUnavailable || b.OK || f["serving"] == "" || len(f) != 1 {
		t.Fatalf("readyz while draining: %d %+v, want 503 with only serving failing", st, b)
	}
	if ready, _ := s.srv.Ready(ctx); ready {
		t.Fatal("Server.Ready is true after Close")
	}
	if st, b := probe(t, s.http.URL, "/livez"); st != http.StatusOK || !b.OK {
		t.Fatalf("livez while draining: %d %+v, want 200", st, b)
	}
	if err := s.store.Close(); err != nil {
		t.Fatal(err)
	}
	st, b = probe(t, s.http.URL, "/readyz")
	if f := failing(b); st != http.StatusServiceUnavailable || f["store"] == "" {
		t.Fatalf("readyz with the store closed: %d %+v, want the store check failing", st, b)
	}
}

func byHeaderConfig() server.Config { return server.Config{Authorizer: byHeader} }

// gatedStore holds every Commit while gate is set, until release closes.
type gatedStore struct {
	*sqlite.Store
	gate    atomic.Bool
	release chan struct{}
}

func (g *gatedStore) Commit(ctx context.Context, sid string, msgs []synccore.Message) error {
	if g.gate.Load() {
		<-g.release
	}
	return g.Store.Commit(ctx, sid, msgs)
}

// Readiness goes false while the server drains, not only once Close has
// returned: with the commit that closes a running turn held, /readyz is
// 503 while Close waits for the turn, and the API answers 503 closed.
func TestNotReadyWhileDraining(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	var tools []model.Tool
	for _, tool := range scripted.DemoTools() {
		if tool.Spec().Name == scripted.ToolWeather {
			tool = model.FuncTool{ToolSpec: tool.Spec(), Fn: func(ctx context.Context, _ any) (any, error) {
				close(entered)
				<-ctx.Done()
				return nil, ctx.Err()
			}}
		}
		tools = append(tools, tool)
	}
	cfg := byHeaderConfig()
	cfg.Tools = tools
	s := start(t, "", cfg)
	// The same file through a store whose commits can be held.
	st, err := sqlite.Open(context.Background(), s.db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: st, release: make(chan struct{})}
	cfg.Store = g
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.stop()
	s.srv, s.store = srv, st
	s.http = httptest.NewServer(srv)
	t.Cleanup(s.stop)
	sid := s.createSession("alice")
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/messages",
		`{"parts":[{"type":"text","text":"scenario:tools city=Oslo"}]}`); a.status != http.StatusCreated {
		t.Fatalf("post: %d %s", a.status, a.body)
	}
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never called the tool")
	}
	if st, _ := probe(t, s.http.URL, "/readyz"); st != http.StatusOK {
		t.Fatalf("readyz with a turn running: %d", st)
	}
	g.gate.Store(true)
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		closed <- s.srv.Close(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, b := probe(t, s.http.URL, "/readyz")
		if st == http.StatusServiceUnavailable {
			if failing(b)["serving"] == "" {
				t.Fatalf("readyz while draining: %+v, want the serving check failing", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("readyz stayed 200 after Close began")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while the tool still held the turn", err)
	default:
	}
	if a := s.call(nil, "alice", "GET", "/v1/sessions", ""); a.status != http.StatusServiceUnavailable {
		t.Fatalf("a request while draining: %d", a.status)
	}
	if st, _ := probe(t, s.http.URL, "/livez"); st != http.StatusOK {
		t.Fatalf("livez while draining: %d", st)
	}
	close(g.release)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return after the tool did")
	}
}
