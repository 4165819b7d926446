package chaos

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/store/postgres"
)

// haproxyBin finds Debian's haproxy (in /usr/sbin, which a user's PATH
// may lack). .ci/run installs it: the test fails without it, never skips.
func haproxyBin(t *testing.T) string {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/haproxy"); err == nil {
		return "/usr/sbin/haproxy"
	}
	t.Fatal("haproxy is not installed (apt-get install haproxy; .ci/run does)")
	return ""
}

// startHAProxy runs examples/deploy/haproxy.cfg in front of the nodes and
// returns its address once every node is up behind it.
func startHAProxy(t *testing.T, nodes []*node) string {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "deploy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bind := ln.Addr().String()
	_ = ln.Close()
	cfg := strings.NewReplacer("@BIND@", bind, "@NODE_A@", nodes[0].addr, "@NODE_B@", nodes[1].addr, "@NODE_C@", nodes[2].addr).Replace(string(tmpl))
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "haproxy.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(haproxyBin(t), "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			if b, _ := os.ReadFile(logPath); len(b) > 0 {
				t.Logf("haproxy:\n%s", tail(string(b), 30))
			}
		}
	})
	// Ready when a request through it reaches a node.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + bind + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return bind
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy on %s never answered /readyz: %v", bind, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHAProxyDeployment runs the deployment of examples/deploy: three
// nodes on PostgreSQL and NATS behind Debian's HAProxy (round robin, no
// stickiness, routed by /readyz). Clients of every host subscribe and
// post through HAProxy only; the node serving a long answer is killed
// (SIGKILL) mid-stream; HAProxy marks it down, another node takes the
// session over, a follow-up is answered, and every client converges on
// the store's digest.
func TestHAProxyDeployment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	r := &run{t: t, rng: rand.New(rand.NewPCG(seed, 3)), db: pg.Database(t), nats: natstest.Start(t), dead: map[*node]bool{}}
	natsAddr := strings.TrimPrefix(r.nats.URL(), "nats://")
	for _, name := range []string{"a", "b", "c"} {
		r.nodes = append(r.nodes, startNode(t, name, r.db, newProxy(t, seed, natsAddr), lease))
	}
	lb := "http://" + startHAProxy(t, r.nodes)
	r.api = &bindings.API{BaseURL: lb}
	st, err := postgres.Open(ctx, r.db, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r.st = st
	rt, err := core.NewRuntime(ctx, core.RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())

	sid := r.createSession(ctx)
	clients := []client{
		dialGo(t, "go-wasm-1/"+sid[:8], lb, sid, rt),
		dialGo(t, "go-wasm-2/"+sid[:8], lb, sid, rt),
		dialGo(t, "go-native/"+sid[:8], lb, sid, nil),
		startNodeClient(t, "js/"+sid[:8], lb, sid),
	}
	// The long answer starts on node a, which then serves the session.
	victim := r.nodes[0]
	r.post(ctx, victim, sid, longAnswer)
	r.waitStreaming(ctx, sid)
	time.Sleep(time.Duration(r.rng.Int64N(int64(time.Second))))
	victim.signal(t, syscall.SIGKILL)
	r.dead[victim] = true
	killed := time.Now()

	settled := r.waitSettled(ctx, []string{sid}, killed)
	r.postThroughBalancer(ctx, sid, "scenario:text chars=200 delta=10")
	r.waitAnswered(ctx, sid, 4)
	want, _ := r.storeDigest(ctx, sid)
	for _, c := range clients {
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		if err := c.converge(cctx, want); err != nil {
			t.Error(err)
		}
		ccancel()
	}
	t.Logf("killed node a mid-stream behind HAProxy: settled %s after, %d clients converged", settled.Round(time.Millisecond), len(clients))
}
