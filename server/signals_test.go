package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
)

// signalReader follows a subscription that asked for signals (?signals=1,
// protocol §4.6): it checks that the numbered frames stay gapless around
// the signals and hands the signals out one by one.
type signalReader struct {
	t       *testing.T
	c       *websocket.Conn
	lastSeq uint64
}

type alternativesSignal struct {
	Signal   string `json:"signal"`
	Sequence int64  `json:"sequence"`
	Count    int    `json:"count"`
	Index    int    `json:"index"`
}

func (l *live) subscribeSignals(user, sessionID string) *signalReader {
	l.t.Helper()
	url := "ws" + strings.TrimPrefix(l.http.URL, "http") + "/v1/sessions/" + sessionID + "/subscribe?signals=1"
	c, _, err := websocket.DefaultDialer.Dial(url, http.Header{"X-User": {user}})
	if err != nil {
		l.t.Fatalf("subscribe with signals: %v", err)
	}
	l.t.Cleanup(func() { _ = c.Close() })
	return &signalReader{t: l.t, c: c}
}

// next returns the next signal of kind, reading past (and checking)
// frames and skipping signals of other kinds.
func (r *signalReader) next(kind string) []byte {
	r.t.Helper()
	for {
		_ = r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
		typ, data, err := r.c.ReadMessage()
		if err != nil {
			r.t.Fatalf("waiting for a signal: %v", err)
		}
		if typ == websocket.TextMessage {
			var s struct {
				Signal string `json:"signal"`
			}
			if err := json.Unmarshal(data, &s); err != nil {
				r.t.Fatalf("signal %q: %v", data, err)
			}
			if s.Signal == kind {
				return data
			}
			continue
		}
		frames, err := wire.DecodeFrames(data)
		if err != nil {
			r.t.Fatalf("frames: %v", err)
		}
		for _, f := range frames {
			if f.Seq != r.lastSeq+1 {
				r.t.Fatalf("frame seq %d after %d: signals broke the numbering", f.Seq, r.lastSeq)
			}
			r.lastSeq = f.Seq
		}
	}
}

func (r *signalReader) expect(want alternativesSignal) {
	r.t.Helper()
	want.Signal = "alternatives"
	var got alternativesSignal
	if err := json.Unmarshal(r.next("alternatives"), &got); err != nil {
		r.t.Fatal(err)
	}
	if got != want {
		r.t.Fatalf("signal %+v, want %+v", got, want)
	}
}

// A subscription that asks for signals hears when a position of its path
// gains an alternative (a regeneration, an edit, wherever they are made)
// and loses one (a fork deleted), each with its own path's count and
// index; its frames stay numbered without a gap.
func TestSignalsTellAlternatives(t *testing.T) {
	t.Parallel()
	s := start(t, "", server.Config{Authorizer: byHeader})
	sid := s.createSession("alice")
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/messages", `{"parts":[{"type":"text","text":"hello"}]}`); a.status != http.StatusCreated {
		t.Fatalf("post: %d %s", a.status, a.body)
	}
	waitHead(t, s, "alice", sid, 2)

	url := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/v1/sessions/" + sid + "/subscribe?signals=yes"
	if _, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"X-User": {"alice"}}); err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("signals=yes: %v, want 400", err)
	}
	parent := s.subscribeSignals("alice", sid)
	fork := func(body string) string {
		a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/fork", body)
		var f struct {
			SessionID string `json:"session_id"`
		}
		if a.status != http.StatusCreated || json.Unmarshal(a.body, &f) != nil {
			t.Fatalf("fork: %d %s", a.status, a.body)
		}
		return f.SessionID
	}
	regen := fork(`{"before_sequence":2,"regenerate":true}`)
	parent.expect(alternativesSignal{Sequence: 2, Count: 2, Index: 0})

	onRegen := s.subscribeSignals("alice", regen)
	edit := fork(`{"before_sequence":2,"parts":[{"type":"text","text":"hello again"}]}`)
	parent.expect(alternativesSignal{Sequence: 2, Count: 3, Index: 0})
	onRegen.expect(alternativesSignal{Sequence: 2, Count: 3, Index: 1})

	if a := s.call(nil, "alice", "DELETE", "/v1/sessions/"+edit, ""); a.status != http.StatusNoContent {
		t.Fatalf("delete the edit: %d %s", a.status, a.body)
	}
	parent.expect(alternativesSignal{Sequence: 2, Count: 2, Index: 0})
	onRegen.expect(alternativesSignal{Sequence: 2, Count: 2, Index: 1})
}

// waitHead polls until the session's newest message has sequence head
// and is done.
func waitHead(t *testing.T, s *live, user, sid string, head int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		a := s.call(nil, user, "GET", "/v1/sessions/"+sid+"/messages?limit=1", "")
		var p struct {
			Items []struct {
				Sequence int64  `json:"sequence"`
				Status   string `json:"status"`
			} `json:"items"`
		}
		if a.status == http.StatusOK && json.Unmarshal(a.body, &p) == nil && len(p.Items) == 1 && p.Items[0].Sequence == head && p.Items[0].Status != "streaming" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session %s never reached a done message %d", sid, head)
}

// expectPresence waits for the presence signal that lists want.
func (r *signalReader) expectPresence(want ...httpwire.Viewer) {
	r.t.Helper()
	for {
		var got struct {
			Viewers []httpwire.Viewer `json:"viewers"`
		}
		if err := json.Unmarshal(r.next("presence"), &got); err != nil {
			r.t.Fatal(err)
		}
		if slices.Equal(got.Viewers, want) {
			return
		}
		// An older state may still be on its way (signals coalesce, they
		// do not wait for each other): the newest one must come.
	}
}

// Presence: every subscription that asked for signals counts among the
// session's viewers (per principal, with its connections), typing is told
// and lapses by itself, and a viewer that leaves is gone from the next
// signal; the frames stay numbered without a gap throughout.
func TestSignalsTellPresence(t *testing.T) {
	t.Parallel()
	s := start(t, "", server.Config{Authorizer: byHeader})
	sid := s.createSession("alice")
	first := s.subscribeSignals("alice", sid)
	first.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 1})
	second := s.subscribeSignals("alice", sid)
	first.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 2})
	second.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 2})

	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/typing", `{"typing":true}`); a.status != http.StatusNoContent {
		t.Fatalf("typing: %d %s", a.status, a.body)
	}
	first.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 2, Typing: true})
	// Nobody says it again: it lapses.
	first.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 2})

	if a := s.call(nil, "bob", "POST", "/v1/sessions/"+sid+"/typing", `{"typing":true}`); a.status != http.StatusNotFound {
		t.Fatalf("another principal's typing: %d, want 404", a.status)
	}
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/typing", `{"typing":"yes"}`); a.status != http.StatusBadRequest {
		t.Fatalf("a bad typing body: %d, want 400", a.status)
	}
	_ = second.c.Close()
	first.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 1})
	// A post in between: the frames around the signals stay gapless.
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/messages", `{"parts":[{"type":"text","text":"hello"}]}`); a.status != http.StatusCreated {
		t.Fatalf("post: %d %s", a.status, a.body)
	}
	waitHead(t, s, "alice", sid, 2)
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/typing", `{"typing":true}`); a.status != http.StatusNoContent {
		t.Fatalf("typing: %d %s", a.status, a.body)
	}
	first.expectPresence(httpwire.Viewer{Principal: "alice", Connections: 1, Typing: true})
	if first.lastSeq < 3 {
		t.Fatalf("the signals came, but only %d frames: the post's were not read around them", first.lastSeq)
	}
}
