// Package examples holds the examples of the README and docs/server.md. This test runs each of them
// as written against a real server on loopback (a real SQLite file, real
// WebSockets, the real module) and checks that the docs show them
// verbatim, so the docs can never drift from code that works.
package examples

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/store/sqlite"
)

// startServer runs the reference server in process on 127.0.0.1.
func startServer(t *testing.T) (url string, srv *server.Server) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "examples.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err = server.New(ctx, server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close(ctx)
		st.Close()
	})
	return hs.URL, srv
}

var digestLine = regexp.MustCompile(`(?m)^digest ([0-9a-f]{64})$`)

// checkRun runs an example and checks what it printed: the tool loop's
// tools and final text, and a view digest equal to the server's snapshot.
// It returns the output.
func checkRun(t *testing.T, url string, srv *server.Server, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	text := string(out)
	for _, want := range []string{"tool get_weather: output-available", "tool calculator: output-available", "text: "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	match := digestLine.FindStringSubmatch(text)
	if match == nil {
		t.Fatalf("no digest line in:\n%s", text)
	}
	want, err := srv.Digest(context.Background(), onlySession(t, url))
	if err != nil {
		t.Fatal(err)
	}
	if match[1] != want {
		t.Errorf("example's view digest %s, server snapshot %s", match[1], want)
	}
	return text
}

func TestGoExample(t *testing.T) {
	url, srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	checkRun(t, url, srv, exec.CommandContext(ctx, "go", "run", "./gobot", "-url", url))
}

func TestNodeExample(t *testing.T) {
	url, srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := checkRun(t, url, srv, exec.CommandContext(ctx, "node", "--experimental-websocket", "node/quickstart.mjs", url))
	// The status listener is attached before the session starts: it sees
	// the whole way to live, in order, and the close.
	if !statusLines.MatchString(out) {
		t.Errorf("output lacks the status events connecting, syncing, live, closed in order:\n%s", out)
	}
}

var statusLines = regexp.MustCompile(`(?s)status connecting.*status syncing.*status live.*status closed`)

// TestDocsShowExamples: the code blocks of the README and docs/server.md
// are the example files.
func TestDocsShowExamples(t *testing.T) {
	for doc, files := range map[string][]string{
		"README.md":      {"gobot/main.go", "node/quickstart.mjs"},
		"docs/server.md": {"embed/main.go"},
	} {
		text, err := os.ReadFile(filepath.Join("..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(text), string(src)) {
				t.Errorf("%s does not show examples/%s verbatim", doc, file)
			}
		}
	}
}

// onlySession is the id of the one session the server holds, listed as a
// client lists it.
func onlySession(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/v1/sessions")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			SessionID string `json:"session_id"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Items) != 1 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	return list.Items[0].SessionID
}
