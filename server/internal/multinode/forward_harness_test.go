package multinode

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/natsbus"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// forwardTimeout bounds one forward in these tests: far above a forward's
// few milliseconds on a loaded machine, short enough for the stall tests.
const forwardTimeout = 1500 * time.Millisecond

// fwdNode is a node on the shared NATS server: its own connection, as a
// separate process would have, and a gate on its commits.
type fwdNode struct {
	*node
	nc   *nats.Conn
	gate *commitGate
}

// startForwardingNode starts a node on ns; tune, if set, adjusts its
// config further.
func startForwardingNode(t *testing.T, db, name string, ns *natstest.Server, tune func(*server.Config)) *fwdNode {
	t.Helper()
	nc := natstest.Connect(t, ns.URL(), name) // its cleanup runs after the node's Close
	gate := &commitGate{}
	n := startNode(t, db, name, ttl, func(c *server.Config) {
		gate.Store = c.Store
		c.Store = gate
		c.Cluster.Transport = natsbus.New(nc)
		c.Cluster.ForwardTimeout = forwardTimeout
		if tune != nil {
			tune(c)
		}
	})
	return &fwdNode{node: n, nc: nc, gate: gate}
}

// commitGate holds a node's leased commits while armed, as a process
// paused in the middle of a commit: each waits for open, then commits
// whatever its context says (the paused process did not see it end).
type commitGate struct {
	store.Store
	mu      sync.Mutex
	held    chan struct{} // nil: commits pass
	entered chan struct{} // one value per commit held
	late    chan error    // the result of each held commit, once it ran
}

func (g *commitGate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.entered, g.late = make(chan struct{}), make(chan struct{}, 64), make(chan error, 64)
}

func (g *commitGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

// waitHeld waits until a commit is held at the gate.
func (g *commitGate) waitHeld(t *testing.T) {
	t.Helper()
	g.mu.Lock()
	entered := g.entered
	g.mu.Unlock()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no commit reached the gate")
	}
}

func (g *commitGate) CommitLeased(ctx context.Context, l store.Lease, msgs []synccore.Message) error {
	g.mu.Lock()
	held, entered, late := g.held, g.entered, g.late
	g.mu.Unlock()
	if held == nil {
		return g.Store.CommitLeased(ctx, l, msgs)
	}
	entered <- struct{}{}
	<-held
	err := g.Store.CommitLeased(context.WithoutCancel(ctx), l, msgs)
	late <- err
	return err
}

// lateCommit is the result of the first commit the gate held.
func (g *commitGate) lateCommit(t *testing.T) error {
	t.Helper()
	g.mu.Lock()
	late := g.late
	g.mu.Unlock()
	select {
	case err := <-late:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the held commit did not run")
		return nil
	}
}

// reply is one raw HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request with the given headers (Content-Type defaults to
// JSON) and returns the raw answer.
func (n *node) send(method, path, body string, header map[string]string) reply {
	n.t.Helper()
	req, err := http.NewRequest(method, n.http.URL+path, strings.NewReader(body))
	if err != nil {
		n.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("node %s: %s %s: %v", n.name, method, path, err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.body, _ = io.ReadAll(resp.Body)
	return r
}

// lease reads the session's lease holder and epoch from the database.
func lease(t *testing.T, db, sid string) (holder string, epoch int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT lease_node, lease_epoch FROM sessions WHERE session_id = $1`, sid).Scan(&holder, &epoch); err != nil {
		t.Fatal(err)
	}
	return holder, epoch
}

// userTexts are the texts of the session's user messages, oldest first.
func userTexts(msgs []synccore.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == synccore.RoleUser {
			out = append(out, m.Parts[0].Text)
		}
	}
	return out
}

// historyAs is n.history with the given headers (a principal's token).
func historyAs(t *testing.T, n *node, sid string, header map[string]string) []synccore.Message {
	t.Helper()
	r := n.send("GET", "/v1/sessions/"+sid+"/messages?limit=200&include_internal=true", "", header)
	var p synccore.MessagePage
	if r.status != http.StatusOK || json.Unmarshal(r.body, &p) != nil {
		t.Fatalf("history: %d %s", r.status, r.body)
	}
	return p.Items
}
