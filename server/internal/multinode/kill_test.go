package multinode

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// syncserver builds the real binary into a temp directory (the build
// cache makes it quick after the first time).
func syncserver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "syncserver")
	cmd := exec.Command("go", "build", "-o", bin, "./server/cmd/syncserver")
	cmd.Dir = filepath.Join("..", "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build syncserver: %v\n%s", err, out)
	}
	return bin
}

// startProcess runs syncserver with args and returns its URL once it
// listens; the test's cleanup kills it if it still runs.
func startProcess(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-log-level", "error"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return cmd, u
	case <-time.After(60 * time.Second):
		t.Fatal("syncserver did not listen within 60 s")
		return nil, ""
	}
}

// postTo posts a JSON body to a process and decodes the answer into out.
func postTo(t *testing.T, url, body string, out any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d", url, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// A real syncserver process serves the session, its answer streaming to
// clients on two other nodes over NATS, and is killed with SIGKILL: it
// releases nothing. Within the lease bound node b takes the session on
// the next post, closes the dead process's message "interrupted", keeps
// everything committed, and every client converges on the digest.
func TestKill9OwnerProcess(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	bin := syncserver(t)
	const procTTL = time.Second
	cmd, url := startProcess(t, bin, "-store", db, "-node", "proc-a", "-lease-ttl", procTTL.String(),
		"-nats", ns.URL(), "-speed", "2ms", "-rate-limit", "-1")
	b := startNATSNode(t, db, ns, "node-b", procTTL, paced)
	c := startNATSNode(t, db, ns, "node-c", procTTL, paced)

	var sess struct {
		SessionID string `json:"session_id"`
	}
	postTo(t, url+"/v1/sessions", "{}", &sess)
	sid := sess.SessionID
	postTo(t, url+"/v1/sessions/"+sid+"/messages", `{"parts":[{"type":"text","text":"scenario:text chars=8000 delta=4"}]}`, nil)
	streaming(t, b, sid)

	crowd := newCrowd(t)
	for i, n := range []*node{b, b, c, c} {
		crowd.join(n, sid, time.Duration(i%2)*500*time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took := postUntilServed(t, b, sid, "hello from b", time.Now(), procTTL)
	t.Logf("b took the session %s after the kill (TTL %s)", took, procTTL)

	h := turnDone(t, b, sid, 4, 20*time.Second)
	if u := h[0]; u.Parts[0].Text != "scenario:text chars=8000 delta=4" {
		t.Fatalf("the committed user message changed: %+v", u)
	}
	open := h[1]
	if last := open.Parts[len(open.Parts)-1]; open.State != synccore.MessageDone || last.Type != synccore.PartError || last.Code != session.CodeInterrupted {
		t.Fatalf("the killed process's message after b took over: %+v", open)
	}
	crowd.converge(b, sid, 20*time.Second)
}
