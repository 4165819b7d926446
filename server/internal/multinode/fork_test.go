package multinode

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server/internal/natstest"
)

// forkOn forks sid on n and returns the fork's id.
func forkOn(t *testing.T, n *node, sid, body string) string {
	t.Helper()
	a := n.call("POST", "/v1/sessions/"+sid+"/fork", body)
	var s struct {
		SessionID string `json:"session_id"`
		Parent    string `json:"parent_session_id"`
	}
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &s) != nil || s.Parent != sid {
		t.Fatalf("fork %s on %s: %d %s", sid, n.name, a.status, a.body)
	}
	return s.SessionID
}

// Two nodes on one database and NATS: a fork made on one node (a
// regeneration streaming there) is followed from the other, and a fork
// made on the node that does not serve the parent (an edit) is served
// there and followed from the first. Every follower ends on the server's
// path of its fork, the shared prefix included, and none sees a broken
// stream.
func TestForkFollowedFromAnotherNode(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", steadyTTL, paced)
	b := startNATSNode(t, db, ns, "node-b", steadyTTL, paced)
	sid := a.createSession()
	mustStatus(t, "post on a", a.post(sid, "scenario:text chars=3000 delta=4"), http.StatusCreated)
	first := turnDone(t, a, sid, 2, 30*time.Second)

	crowd := newCrowd(t)
	of := map[*follower]string{}
	// A subscriber of the parent on b, which does not serve it, hears of
	// every fork in the conversation, wherever it is made (§4.6).
	signal := signalsOn(t, b, sid)
	// Presence crosses nodes too: a viewer on a and the one on b are one
	// principal with two connections, as b hears it.
	onA := signalsOn(t, a, sid)
	for p := ""; !strings.Contains(p, `"connections":2`); {
		p = signal("presence") // until b's presence holds a's viewer too
	}
	if p := onA("presence"); !strings.Contains(p, `"principal":""`) {
		t.Fatalf("presence on a: %s", p)
	}
	regen := forkOn(t, a, sid, `{"before_sequence":2,"regenerate":true}`)
	if got := signal("alternatives"); got != `{"signal":"alternatives","sequence":2,"count":2,"index":0}` {
		t.Fatalf("signal on b after a regeneration on a: %s; alternatives now on b %s, on a %s", got, b.call("GET", "/v1/sessions/"+sid+"/alternatives", "").body, a.call("GET", "/v1/sessions/"+sid+"/alternatives", "").body)
	}
	for i := range 3 {
		of[crowd.join(b, regen, time.Duration(i%2)*300*time.Millisecond)] = regen
	}
	edit := forkOn(t, b, sid, `{"before_sequence":2,"parts":[{"type":"text","text":"scenario:text chars=2000 delta=4"}]}`)
	if got := signal("alternatives"); got != `{"signal":"alternatives","sequence":2,"count":3,"index":0}` {
		t.Fatalf("signal on b after an edit on b: %s", got)
	}
	// The edit is a new user message at 2: its path is 1 (shared), 2, 3.
	for i := range 2 {
		of[crowd.join(a, edit, time.Duration(i)*300*time.Millisecond)] = edit
	}
	r := turnDone(t, a, regen, 2, 30*time.Second)
	e := turnDone(t, b, edit, 3, 30*time.Second)
	if r[0].MessageID != first[0].MessageID || e[0].MessageID != first[0].MessageID || r[1].MessageID == first[1].MessageID {
		t.Fatalf("paths: parent %s %s, regeneration %s %s, edit %s", first[0].MessageID, first[1].MessageID, r[0].MessageID, r[1].MessageID, e[0].MessageID)
	}
	// Both forks read the same from either node.
	if got := b.history(regen); len(got) != 2 || got[1].MessageID != r[1].MessageID {
		t.Fatalf("the regeneration read on b: %d messages", len(got))
	}
	crowdConverge(t, crowd, a, of)
}

// signalsOn subscribes to sid on n with signals and returns a function
// that waits for the next signal of a kind, skipping frames and others.
func signalsOn(t *testing.T, n *node, sid string) func(kind string) string {
	t.Helper()
	url := "ws" + strings.TrimPrefix(n.http.URL, "http") + "/v1/sessions/" + sid + "/subscribe?signals=1"
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("subscribe with signals on %s: %v", n.name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return func(kind string) string {
		t.Helper()
		for {
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			typ, data, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("waiting for a signal on %s: %v", n.name, err)
			}
			if typ == websocket.TextMessage && strings.HasPrefix(string(data), `{"signal":"`+kind+`"`) {
				return string(data)
			}
		}
	}
}

// crowdConverge converges a crowd whose followers sync different
// sessions, each on its own session's digest.
func crowdConverge(t *testing.T, c *crowd, n *node, of map[*follower]string) {
	t.Helper()
	close(c.stop)
	for _, d := range c.done {
		<-d
	}
	for _, f := range c.all {
		want, err := n.srv.Digest(t.Context(), of[f])
		if err != nil {
			t.Fatal(err)
		}
		f.converge(want, 20*time.Second)
		if len(f.breaks) > 0 {
			t.Errorf("a client on node %s saw a broken stream: %q", f.n.name, f.breaks)
		}
	}
}
