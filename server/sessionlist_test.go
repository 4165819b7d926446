package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server"
)

type sessionListMsg struct {
	Kind      string             `json:"kind"`
	Items     []httpwire.Session `json:"items"`
	Session   *httpwire.Session  `json:"session"`
	SessionID string             `json:"session_id"`
}

// TestSessionListLive: a watcher of GET /v1/sessions/subscribe reads its
// whole list, then each session created, renamed and deleted by another
// client, and never another principal's.
func TestSessionListLive(t *testing.T) {
	t.Parallel()
	s := start(t, "", server.Config{Authorizer: byHeader})
	before := s.createSession("alice")
	url := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/v1/sessions/subscribe"
	c, _, err := websocket.DefaultDialer.Dial(url, http.Header{"X-User": {"alice"}})
	if err != nil {
		t.Fatalf("subscribe to the session list: %v", err)
	}
	defer c.Close()
	next := func() sessionListMsg {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		typ, data, err := c.ReadMessage()
		if err != nil || typ != websocket.TextMessage {
			t.Fatalf("read the session list: %d %v", typ, err)
		}
		var m sessionListMsg
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("message %q: %v", data, err)
		}
		return m
	}
	if m := next(); m.Kind != "sessions" || len(m.Items) != 1 || m.Items[0].SessionID != before {
		t.Fatalf("first message %+v, want the list of %s", m, before)
	}
	s.createSession("bob") // not alice's: she must not hear of it
	id := s.createSession("alice")
	if m := next(); m.Kind != "upsert" || m.Session == nil || m.Session.SessionID != id {
		t.Fatalf("after a create: %+v, want an upsert of %s", m, id)
	}
	if a := s.call(nil, "alice", "PATCH", "/v1/sessions/"+id, `{"title":"renamed"}`); a.status != http.StatusOK {
		t.Fatalf("rename: %d %s", a.status, a.body)
	}
	if m := next(); m.Kind != "upsert" || m.Session == nil || m.Session.SessionID != id || m.Session.Title != "renamed" {
		t.Fatalf("after a rename: %+v", m)
	}
	if a := s.call(nil, "alice", "DELETE", "/v1/sessions/"+id, ""); a.status >= 300 {
		t.Fatalf("delete: %d %s", a.status, a.body)
	}
	if m := next(); m.Kind != "delete" || m.SessionID != id {
		t.Fatalf("after a delete: %+v", m)
	}
}

// TestSessionListAnonymousRefused: the list needs a principal, as GET /v1/sessions.
func TestSessionListAnonymousRefused(t *testing.T) {
	t.Parallel()
	s := start(t, "", server.Config{Authorizer: byHeader})
	url := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/v1/sessions/subscribe"
	c, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err == nil {
		c.Close()
		t.Fatal("an anonymous caller subscribed to a session list")
	}
	if resp == nil || resp.StatusCode < 400 {
		t.Fatalf("refusal: %v %v", resp, err)
	}
}
