package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// client is one viewer of a session, of either host. converge waits
// until it is live with the digest want; doneSeen is what the client saw
// done, message id to that message's digest (nil for a host that does
// not report it).
type client interface {
	name() string
	converge(ctx context.Context, want string) error
	doneSeen() (seen map[string]string, changed []string)
}

// goClient is the Go host (bindings), under wazero or on the native core.
// Every view it publishes is checked: a message once done must never
// change.
type goClient struct {
	label string
	c     *bindings.Client

	mu      sync.Mutex
	done    map[string]string // message id: digest when first seen done
	doneMsg map[string]synccore.Message
	// checked is the message each id had when last checked: a view shares
	// every unchanged message with the one before (same pointer), so only
	// a message that changed is digested again.
	checked map[string]*synccore.Message
	changed []string
}

// dialGo connects a Go host client: under wazero on rt, or on the native
// core when rt is nil.
func dialGo(t *testing.T, label, baseURL, sid string, rt *core.Runtime) *goClient {
	t.Helper()
	cfg := bindings.Config{BaseURL: baseURL, SessionID: sid, Runtime: rt}
	if rt == nil {
		cfg.Core = core.NewNativeCore()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Not Dial: the proxies cut connections, and Dial gives up on the first
	// network failure (a retryable error for the app); a client made by
	// New goes on trying by itself.
	c, err := bindings.New(ctx, cfg)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if err := c.WaitFor(ctx, func(v bindings.View) bool { return v.Status == synccore.StatusLive }); err != nil {
		_ = c.Close()
		t.Fatalf("%s: not live: %v", label, err)
	}
	g := &goClient{label: label, c: c, done: map[string]string{}, doneMsg: map[string]synccore.Message{},
		checked: map[string]*synccore.Message{}}
	stop := c.Subscribe(g.check)
	t.Cleanup(func() {
		stop()
		_ = c.Close()
	})
	return g
}

func (g *goClient) check(v bindings.View) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range v.Messages.All() {
		if m.State != synccore.MessageDone || g.checked[m.MessageID] == m {
			continue
		}
		g.checked[m.MessageID] = m
		d := wire.DigestMessages([]synccore.Message{*m})
		if first, ok := g.done[m.MessageID]; !ok {
			g.done[m.MessageID] = d
			g.doneMsg[m.MessageID] = *m
		} else if first != d {
			g.changed = append(g.changed, fmt.Sprintf("%s: message %d changed after it was done", g.label, m.Sequence))
			g.done[m.MessageID] = d
		}
	}
}

func (g *goClient) name() string { return g.label }

func (g *goClient) converge(ctx context.Context, want string) error {
	for {
		if g.c.Status() == synccore.StatusLive {
			if d, err := g.c.Digest(ctx); err == nil && d == want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			d, _ := g.c.Digest(context.Background())
			return fmt.Errorf("%s: not converged: status %s, digest %s, want %s; view %s", g.label, g.c.Status(), d, want, viewSummary(g.c.View()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (g *goClient) doneSeen() (map[string]string, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.done), slices.Clone(g.changed)
}

// nodeClient is the JavaScript host in a Node process
// (testdata/client.mjs): it follows the session and, given a digest on
// stdin, answers once it is live with it (or gives up).
type nodeClient struct {
	label string
	in    io.WriteCloser
	out   *bufio.Scanner
	cmd   *exec.Cmd
}

func startNodeClient(t *testing.T, label, baseURL, sid string) *nodeClient {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("testdata", "client.mjs"))
	cmd := exec.Command("node", "--experimental-websocket", "--no-warnings", script, baseURL, sid)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	n := &nodeClient{label: label, in: in, out: bufio.NewScanner(out), cmd: cmd}
	n.out.Buffer(nil, 1<<20)
	var hello struct {
		Live  bool   `json:"live"`
		Error string `json:"error"`
	}
	if err := n.read(&hello); err != nil || !hello.Live {
		t.Fatalf("%s: did not connect: %v %s", label, err, hello.Error)
	}
	return n
}

func (n *nodeClient) read(v any) error {
	if !n.out.Scan() {
		return fmt.Errorf("%s: the process ended: %v", n.label, n.out.Err())
	}
	return json.Unmarshal(n.out.Bytes(), v)
}

func (n *nodeClient) name() string { return n.label }

func (n *nodeClient) converge(ctx context.Context, want string) error {
	ms := int64(20000)
	if d, ok := ctx.Deadline(); ok {
		ms = time.Until(d).Milliseconds()
	}
	if _, err := fmt.Fprintf(n.in, "%s %d\n", want, ms); err != nil {
		return err
	}
	var got struct {
		OK     bool   `json:"ok"`
		Status string `json:"status"`
		Digest string `json:"digest"`
	}
	if err := n.read(&got); err != nil {
		return err
	}
	if !got.OK {
		return fmt.Errorf("%s: not converged: status %s, digest %s, want %s", n.label, got.Status, got.Digest, want)
	}
	return nil
}

func (n *nodeClient) doneSeen() (map[string]string, []string) { return nil, nil }

func viewSummary(v bindings.View) string {
	var msgs []synccore.Message
	for _, m := range v.Messages.All() {
		msgs = append(msgs, *m)
	}
	return summary(msgs)
}
