package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// testServer is the reference server in process on 127.0.0.1: a SQLite
// file, the session engine with the scripted model, HTTP and WebSocket.
type testServer struct {
	URL   string
	Token string
	srv   *server.Server
	hs    *httptest.Server
}

// zeroSpeed runs the scripted model at full speed.
var zeroSpeed = model.Speed{}

const testToken = "tui-test-token"

// startServer runs a server whose API needs testToken.
func startServer(t *testing.T, speed model.Speed) *testServer {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tui.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	srv, err := server.New(ctx, server.Config{Store: st, Speed: speed, Logger: quiet, Authorizer: auth.SharedToken(testToken)})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close(ctx)
		_ = st.Close()
	})
	return &testServer{URL: hs.URL, Token: testToken, srv: srv, hs: hs}
}

func (s *testServer) api() *bindings.API { return &bindings.API{BaseURL: s.URL, Token: s.Token} }

// onlySession is the id of the one session on the server.
func (s *testServer) onlySession(ctx context.Context, t *testing.T) string {
	t.Helper()
	list, err := s.api().Sessions(ctx)
	if err != nil {
		t.Fatalf("list sessions: %v", err)
	}
	if len(list) != 1 {
		t.Fatalf("%d sessions on the server, want 1", len(list))
	}
	return list[0].SessionID
}

// snapshot reads a session's whole history from the server's snapshot.
func (s *testServer) snapshot(ctx context.Context, t *testing.T, sessionID string) []synccore.Message {
	t.Helper()
	page, err := s.api().Messages(ctx, sessionID, synccore.MaxPageLimit, 0, false)
	if err != nil {
		t.Fatalf("read the snapshot of %s: %v", sessionID, err)
	}
	return page.Items
}

// replyTo waits until the session's newest message is a closed agent
// message that follows a user message of the prompt, and returns it.
func (s *testServer) replyTo(ctx context.Context, t *testing.T, sessionID, prompt string) *synccore.Message {
	t.Helper()
	for {
		msgs := s.snapshot(ctx, t, sessionID)
		if n := len(msgs); n >= 2 && msgs[n-1].Role == synccore.RoleAgent && msgs[n-1].Done() {
			for i := n - 2; i >= 0; i-- {
				if m := msgs[i]; m.Role == synccore.RoleUser {
					if len(m.Parts) > 0 && m.Parts[0].Text == prompt {
						return &msgs[n-1]
					}
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no closed reply to %q on the server: %v", prompt, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lastReply is the newest agent message of a snapshot.
func lastReply(t *testing.T, msgs []synccore.Message) *synccore.Message {
	t.Helper()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == synccore.RoleAgent {
			return &msgs[i]
		}
	}
	t.Fatalf("no agent message in the snapshot (%d messages)", len(msgs))
	return nil
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binOut  []byte
	// tmpRoot holds the binary and the shared wazero cache; TestMain
	// removes it.
	tmpRoot string
)

// agentsyncBinary builds this command once per test binary.
func agentsyncBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		binPath = filepath.Join(tmpRoot, "agentsync")
		// Not -race even under -race: wazero compiling the module in a
		// race-instrumented process takes minutes.
		cmd := exec.CommandContext(ctx, "go", "build", "-o", binPath, ".")
		if binOut, binErr = cmd.CombinedOutput(); binErr != nil {
			return
		}
		// Compile the module once into the children's wazero cache
		// ($XDG_CACHE_HOME/agentsync, childEnv), so that the commands the
		// tests start in parallel load it instead of each compiling it.
		rt, err := core.NewRuntime(ctx, core.RuntimeConfig{CacheDir: filepath.Join(tmpRoot, "cache", "agentsync")})
		if err != nil {
			binErr, binOut = err, []byte("warm the wazero cache")
			return
		}
		_ = rt.Close(ctx)
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binOut)
	}
	return binPath
}

// childEnv is the environment of the built command: the wazero compilation
// cache in the test's temp root (never the user's), no colour, no server
// settings inherited.
func childEnv(extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tmpRoot,
		"XDG_CACHE_HOME=" + filepath.Join(tmpRoot, "cache"),
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
	}
	return append(env, extra...)
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentsync-tui-test-")
	if err != nil {
		panic(err)
	}
	tmpRoot = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
