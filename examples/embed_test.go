package examples

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

var listeningLine = regexp.MustCompile(`listening on (http://\S+)`)

// startEmbed builds examples/embed and runs it on a free port over a new
// SQLite file; it returns the app's URL and the running process.
func startEmbed(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "embed")
	if out, err := exec.Command("go", "build", "-o", bin, "./embed").CombinedOutput(); err != nil {
		t.Fatalf("build examples/embed: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "embed.db"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	select {
	case url := <-urls:
		return url, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("examples/embed printed no listening line")
	}
	return "", nil
}

// appCall sends a request to the app with extra headers ("Name: value")
// and returns the status and body.
func appCall(t *testing.T, method, url, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// login signs name in and returns its token.
func login(t *testing.T, url, name string) string {
	t.Helper()
	status, body := appCall(t, "POST", url+"/api/login", `{"name":"`+name+`"}`)
	var out struct{ Token string }
	if status != http.StatusOK || json.Unmarshal(body, &out) != nil || out.Token == "" {
		t.Fatalf("login %s: %d %s", name, status, body)
	}
	return out.Token
}

// The embedding app: its own routes and sign-in work beside the agent API
// under /agent/, which the Go host syncs through (WebSocket included) as
// the signed-in user; another user sees none of it; SIGTERM drains.
func TestEmbedExample(t *testing.T) {
	url, cmd := startEmbed(t)
	if status, body := appCall(t, "GET", url+"/", ""); status != http.StatusOK || !strings.Contains(string(body), "My app") {
		t.Fatalf("the app's home page: %d %s", status, body)
	}
	alice, bob := login(t, url, "alice"), login(t, url, "bob")
	if status, body := appCall(t, "GET", url+"/api/me", "", "Authorization: Bearer "+alice); status != http.StatusOK || !strings.Contains(string(body), `"alice"`) {
		t.Fatalf("/api/me as alice: %d %s", status, body)
	}
	if status, _ := appCall(t, "GET", url+"/api/me", ""); status != http.StatusUnauthorized {
		t.Fatalf("/api/me signed out: %d, want 401", status)
	}
	if status, _ := appCall(t, "GET", url+"/agent/v1/sessions", ""); status != http.StatusUnauthorized {
		t.Fatalf("the agent API signed out: %d, want 401", status)
	}

	// Alice syncs a session through the real Go host: a tool loop, then
	// her view's digest equals the snapshot's.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	agent := url + "/agent"
	sess, err := (&bindings.API{BaseURL: agent, Token: alice}).CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := bindings.Dial(ctx, bindings.Config{BaseURL: agent, Token: alice, SessionID: sess.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:tools"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(v bindings.View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Sequence > sent.Sequence && last.Done()
	}); err != nil {
		t.Fatal(err)
	}
	page, err := (&bindings.API{BaseURL: agent, Token: alice}).Messages(ctx, sess.SessionID, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Digest(ctx); err != nil || got != wire.DigestMessages(page.Items) {
		t.Fatalf("alice's view digest %s (%v), snapshot %s", got, err, wire.DigestMessages(page.Items))
	}
	// A browser signed in with the cookie lists the same session.
	if status, body := appCall(t, "GET", agent+"/v1/sessions", "", "Cookie: app_session="+alice); status != http.StatusOK || !strings.Contains(string(body), sess.SessionID) {
		t.Fatalf("alice's sessions by cookie: %d %s", status, body)
	}

	// Bob sees nothing of it: not in his list, 404 on read and subscribe.
	if status, body := appCall(t, "GET", agent+"/v1/sessions", "", "Authorization: Bearer "+bob); status != http.StatusOK || strings.Contains(string(body), sess.SessionID) {
		t.Fatalf("bob's sessions: %d %s", status, body)
	}
	if status, _ := appCall(t, "GET", agent+"/v1/sessions/"+sess.SessionID+"/messages", "", "Authorization: Bearer "+bob); status != http.StatusNotFound {
		t.Fatalf("bob reading alice's session: %d, want 404", status)
	}
	ws := "ws" + strings.TrimPrefix(agent, "http") + "/v1/sessions/" + sess.SessionID + "/subscribe?token=" + bob
	if conn, resp, err := websocket.DefaultDialer.Dial(ws, nil); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		if conn != nil {
			conn.Close()
		}
		t.Fatalf("bob subscribing to alice's session: %v, want a 404 answer", err)
	}

	// SIGTERM: the app drains the agent and exits cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20 s after SIGTERM")
	}
}
