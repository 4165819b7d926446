package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// Close drains: with a turn streaming to two subscribers, both get the
// message closed with a committed "shutdown" error part and then close
// 1001; requests after Close get 503 closed; a new server on the same
// store serves exactly what was committed.
func TestCloseDrains(t *testing.T) {
	cfg := server.Config{Authorizer: byHeader, Speed: model.Paced(time.Millisecond)}
	s := start(t, "", cfg)
	sid := s.createSession("alice")
	var subs [2]*websocket.Conn
	for i := range subs {
		c, a := s.subscribe("alice", sid)
		if c == nil {
			t.Fatalf("subscribe: %d %+v", a.status, a.err)
		}
		subs[i] = c
	}
	if a := s.call(nil, "alice", "POST", "/v1/sessions/"+sid+"/messages",
		`{"parts":[{"type":"text","text":"scenario:long chars=200000"}]}`); a.status != http.StatusCreated {
		t.Fatalf("post: %d %s", a.status, a.body)
	}
	// The turn is streaming once a delta arrived.
	for deltas := 0; deltas == 0; {
		frames, err := readFrames(subs[0], 10*time.Second)
		if err != nil {
			t.Fatalf("waiting for the stream: %v", err)
		}
		for _, f := range frames {
			if f.Kind == synccore.FrameDelta {
				deltas++
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	began := time.Now()
	if err := s.srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(began))
	if a := s.call(nil, "alice", "GET", "/v1/sessions", ""); a.status != http.StatusServiceUnavailable || a.err.Code != synccore.CodeClosed {
		t.Fatalf("a request after Close: %d %+v, want 503 closed", a.status, a.err)
	}
	if _, a := s.subscribe("alice", sid); a.status != http.StatusServiceUnavailable || a.err.Code != synccore.CodeClosed {
		t.Fatalf("a subscription after Close: %d %+v, want 503 closed", a.status, a.err)
	}

	var closing [2]*synccore.Message
	for i, c := range subs {
		for {
			frames, err := readFrames(c, 10*time.Second)
			if err != nil {
				if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
					t.Fatalf("subscriber %d ended with %v, want close 1001", i, err)
				}
				break
			}
			for _, f := range frames {
				if f.Kind == synccore.FrameMessage && f.Message.Role == synccore.RoleAgent {
					closing[i] = f.Message
				}
			}
		}
		m := closing[i]
		if m == nil || m.State != synccore.MessageDone {
			t.Fatalf("subscriber %d: no closed agent message before the close frame", i)
		}
		if last := m.Parts[len(m.Parts)-1]; last.Type != synccore.PartError || last.Code != "shutdown" {
			t.Fatalf("subscriber %d: last part %s %q, want the error part shutdown", i, last.Type, last.Code)
		}
	}
	s.stop()

	// A successor on the same store: nothing to recover, the closing
	// snapshot is what it serves.
	next := start(t, s.db, cfg)
	a := next.call(nil, "alice", "GET", "/v1/sessions/"+sid+"/messages", "")
	var page synccore.MessagePage
	if a.status != http.StatusOK || json.Unmarshal(a.body, &page) != nil {
		t.Fatalf("read back: %d %s", a.status, a.body)
	}
	if len(page.Items) != 2 {
		t.Fatalf("read back %d messages, want the prompt and the reply", len(page.Items))
	}
	got := page.Items[1]
	if got.State != synccore.MessageDone || got.Revision != closing[0].Revision || len(got.Parts) != len(closing[0].Parts) {
		t.Fatalf("read back %s rev %d with %d parts; subscribers saw rev %d with %d parts",
			got.State, got.Revision, len(got.Parts), closing[0].Revision, len(closing[0].Parts))
	}
	want, err := next.srv.Digest(context.Background(), sid)
	if err != nil || want != wire.DigestMessages(page.Items) {
		t.Fatalf("digest of the read-back page %s, server %s (%v)", wire.DigestMessages(page.Items), want, err)
	}
}
