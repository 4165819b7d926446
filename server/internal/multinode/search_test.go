package multinode

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/natstest"
)

// searchOn searches on n and returns the hits as session/message ids.
func searchOn(t *testing.T, n *node, q string) []string {
	t.Helper()
	a := n.call("GET", "/v1/search?limit=100&q="+url.QueryEscape(q), "")
	var res httpwire.SearchResults
	if a.status != http.StatusOK || json.Unmarshal(a.body, &res) != nil {
		t.Fatalf("search %q on %s: %d %s", q, n.name, a.status, a.body)
	}
	out := make([]string, len(res.Items))
	for i, h := range res.Items {
		out[i] = h.SessionID + "/" + h.MessageID
	}
	return out
}

// Two nodes on one database: search on one finds what the other wrote
// (a user message and the reply it streamed, once done), a fork's shared
// prefix once under the session it was written in, and a deleted
// session's messages no more.
func TestSearchFindsTextWrittenOnAnotherNode(t *testing.T) {
	ns := natstest.Start(t)
	db := pg.Database(t)
	a := startNATSNode(t, db, ns, "node-a", steadyTTL, paced)
	b := startNATSNode(t, db, ns, "node-b", steadyTTL, paced)
	sid := a.createSession()
	mustStatus(t, "post on a", a.post(sid, "the wombat digs"), http.StatusCreated)
	first := turnDone(t, a, sid, 2, 30*time.Second)
	want := []string{sid + "/" + first[1].MessageID, sid + "/" + first[0].MessageID} // the reply quotes it
	if got := searchOn(t, b, "wombat"); !slices.Equal(got, want) {
		t.Fatalf("on b: %v, want %v", got, want)
	}
	// An edit forked on b: its own message is the fork's, the shared
	// first message stays the root's, found once.
	edit := forkOn(t, b, sid, `{"before_sequence":2,"parts":[{"type":"text","text":"the wombat sleeps"}]}`)
	e := turnDone(t, b, edit, 3, 30*time.Second)
	got := searchOn(t, a, "wombat")
	want = []string{edit + "/" + e[2].MessageID, edit + "/" + e[1].MessageID, sid + "/" + first[1].MessageID, sid + "/" + first[0].MessageID}
	if !slices.Equal(got, want) {
		t.Fatalf("after the fork, on a: %v, want %v", got, want)
	}
	// The root deleted on b: its messages drop out on a, the fork's stay.
	mustStatus(t, "delete on b", b.call("DELETE", "/v1/sessions/"+sid, ""), http.StatusNoContent)
	if got := searchOn(t, a, "wombat"); !slices.Equal(got, want[:2]) {
		t.Fatalf("after the delete, on a: %v, want %v", got, want[:2])
	}
}
