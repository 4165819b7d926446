package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// TestSessionTitleAndOrder: the first user message names a session, and
// the list puts the session active last first.
func TestSessionTitleAndOrder(t *testing.T) {
	s := newServer(t, serverOpts{})
	older := s.createSession()
	newer := s.createSession()
	s.say(older, "  What is the   weather in Oslo?  ")
	s.waitIdle(older, 2)

	var list struct {
		Items []sessionBody `json:"items"`
	}
	s.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 2 || list.Items[0].SessionID != older || list.Items[1].SessionID != newer {
		t.Fatalf("list not by last activity: %+v", list.Items)
	}
	if list.Items[0].Title != "What is the weather in Oslo?" || list.Items[1].Title != "" {
		t.Fatalf("titles: %+v", list.Items)
	}
}

func TestRenameSession(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	var got sessionBody
	s.do("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "  Trip plans "}).expect(t, http.StatusOK, &got)
	if got.SessionID != sid || got.Title != "Trip plans" {
		t.Fatalf("renamed: %+v", got)
	}
	// A first message no longer names it.
	s.say(sid, "hello")
	s.waitIdle(sid, 2)
	var list struct {
		Items []sessionBody `json:"items"`
	}
	s.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if list.Items[0].Title != "Trip plans" {
		t.Fatalf("title after a message: %+v", list.Items[0])
	}

	s.do("PATCH", "/v1/sessions/"+sid, map[string]any{}).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	s.do("PATCH", "/v1/sessions/"+sid, map[string]any{"title": "   "}).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	s.do("PATCH", "/v1/sessions/"+sid, map[string]any{"title": 42}).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	s.do("PATCH", "/v1/sessions/ses_nope", map[string]any{"title": "x"}).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
}

// TestDeleteSessionClosesSubscriptions: deleting a session in the middle of
// a stream stops the turn, removes every message, and ends each
// subscription with an error frame (not_found, "session deleted") and a
// normal close.
func TestDeleteSessionClosesSubscriptions(t *testing.T) {
	s := newServer(t, serverOpts{Speed: model.Paced(time.Millisecond)})
	sid := s.createSession()
	other := s.createSession()
	w := s.subscribe(sid)
	mir := newMirror(t)
	s.say(sid, "scenario:long chars=100000")
	follow(t, w, mir, func(synccore.Frame) bool { return mir.deltas >= 10 })

	s.do("DELETE", "/v1/sessions/"+sid, nil).expect(t, http.StatusNoContent, nil)

	var last synccore.Frame
	for {
		frames, err := w.read(10 * time.Second)
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Fatalf("after delete: %v, want close 1000", err)
			}
			break
		}
		last = frames[len(frames)-1]
	}
	if last.Kind != synccore.FrameError || last.Code != synccore.CodeNotFound || last.Reason != session.DeletedReason {
		t.Fatalf("last frame before the close: %+v", last)
	}

	s.do("GET", "/v1/sessions/"+sid+"/messages", nil).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
	s.do("DELETE", "/v1/sessions/"+sid, nil).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
	s.do("POST", "/v1/sessions/"+sid+"/messages", textParts("hi")).expectError(t, http.StatusNotFound, synccore.CodeNotFound)
	var list struct {
		Items []sessionBody `json:"items"`
	}
	s.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 1 || list.Items[0].SessionID != other {
		t.Fatalf("after delete: %+v", list.Items)
	}
	// A subscription to the deleted session is refused plainly.
	_, resp, err := websocket.DefaultDialer.Dial(s.wsURL(sid), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("subscribe after delete: %v, %v", err, resp)
	}
}
