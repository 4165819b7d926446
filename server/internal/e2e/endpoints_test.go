package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/synccore"
)

func TestHealthz(t *testing.T) {
	s := newServer(t, serverOpts{})
	var body struct {
		OK bool `json:"ok" msgpack:"ok"`
	}
	r := s.do("GET", "/healthz", nil)
	r.expect(t, http.StatusOK, &body)
	if !body.OK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("healthz: %+v, content type %q", body, r.Header.Get("Content-Type"))
	}
	body.OK = false
	r = s.do("GET", "/healthz", nil, "Accept: application/msgpack")
	r.expect(t, http.StatusOK, &body)
	if !body.OK || r.Header.Get("Content-Type") != "application/msgpack" {
		t.Fatalf("healthz msgpack: %+v, content type %q", body, r.Header.Get("Content-Type"))
	}
}

func TestSessionsCreateAndList(t *testing.T) {
	s := newServer(t, serverOpts{})
	var list struct {
		Items []sessionBody `json:"items"`
	}
	s.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if list.Items == nil || len(list.Items) != 0 {
		t.Fatalf("empty server lists %v, want []", list.Items)
	}

	var first sessionBody
	s.do("POST", "/v1/sessions", nil).expect(t, http.StatusCreated, &first) // no body at all
	if first.SessionID == "" || first.Model != "scripted" || first.CreatedAt <= 0 {
		t.Fatalf("created %+v", first)
	}
	var second sessionBody
	s.do("POST", "/v1/sessions", map[string]any{"model": "scripted"}).expect(t, http.StatusCreated, &second)
	var third sessionBody
	body, _ := msgpack.Marshal(map[string]any{"model": "scripted"})
	s.do("POST", "/v1/sessions", body, "Content-Type: application/msgpack", "Accept: application/msgpack").
		expect(t, http.StatusCreated, &third)
	if third.SessionID == "" || third.SessionID == second.SessionID {
		t.Fatalf("msgpack create: %+v", third)
	}

	s.do("GET", "/v1/sessions", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 3 {
		t.Fatalf("listed %d sessions, want 3", len(list.Items))
	}
	if list.Items[0].SessionID != third.SessionID || list.Items[2].SessionID != first.SessionID {
		t.Fatalf("list not newest first: %+v", list.Items)
	}
	s.do("GET", "/v1/sessions?limit=2", nil).expect(t, http.StatusOK, &list)
	if len(list.Items) != 2 {
		t.Fatalf("limit=2 listed %d", len(list.Items))
	}
	s.do("POST", "/v1/sessions", map[string]any{"model": "no-such-model"}).expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
}

func TestPostMessageAndReply(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	um := s.say(sid, "hello there")
	if um.Role != synccore.RoleUser || um.Sequence != 1 || um.Revision != 1 || um.State != "" ||
		um.Visibility != synccore.VisibilityVisible || um.SessionID != sid || len(um.Parts) != 1 ||
		um.Parts[0].Text != "hello there" || um.Parts[0].PartID == "" || um.Parts[0].Sequence != 1 {
		t.Fatalf("user message %+v", um)
	}
	msgs := s.waitIdle(sid, 2)
	if len(msgs) != 2 {
		t.Fatalf("history: %s", summary(msgs))
	}
	agent := msgs[1]
	if agent.Role != synccore.RoleAgent || agent.State != synccore.MessageDone || agent.Sequence != 2 ||
		!strings.Contains(textOf(agent), "hello there") || agent.TurnID == "" || agent.TurnID != msgs[0].TurnID {
		t.Fatalf("agent reply: %s / %+v", summary(msgs), agent)
	}

	// Every kind of user part goes through, in JSON and in msgpack.
	parts := []map[string]any{
		{"type": "text", "text": "look"},
		{"type": "context", "tag": "reference", "context": "earlier message"},
		{"type": "file", "url": "data:text/plain;base64,aGk=", "media_type": "text/plain", "filename": "hi.txt"},
		{"type": "data", "data_type": "ui", "data": map[string]any{"k": 1}, "data_id": "d1"},
	}
	body, _ := msgpack.Marshal(map[string]any{"parts": parts})
	var m synccore.Message
	s.do("POST", "/v1/sessions/"+sid+"/messages", body, "Content-Type: application/msgpack", "Accept: application/msgpack").
		expect(t, http.StatusCreated, &m)
	if len(m.Parts) != 4 || m.Parts[1].Tag != "reference" || m.Parts[2].Filename != "hi.txt" || m.Parts[3].DataID != "d1" {
		t.Fatalf("msgpack user message %+v", m)
	}
	s.waitIdle(sid, 4)
}

// TestMsgpackCompactInts checks that small integers go out in their
// smallest msgpack form (JavaScript decoders would otherwise see BigInts).
func TestMsgpackCompactInts(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	s.say(sid, "hi")
	s.waitIdle(sid, 2)
	r := s.do("GET", "/v1/sessions/"+sid+"/messages", nil, "Accept: application/msgpack")
	var raw map[string]any
	r.expect(t, http.StatusOK, &raw)
	if _, ok := raw["total"].(int8); !ok {
		t.Fatalf("total decoded as %T, want int8 (compact int)", raw["total"])
	}
	items := raw["items"].([]any)
	if _, ok := items[0].(map[string]any)["sequence"].(int8); !ok {
		t.Fatalf("sequence decoded as %T", items[0].(map[string]any)["sequence"])
	}
}

func TestActions(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	// Idle session: the action becomes its own agent message.
	var m synccore.Message
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "set_approval_mode", "value": "auto"}).
		expect(t, http.StatusOK, &m)
	if m.Role != synccore.RoleAgent || len(m.Parts) != 1 || m.Parts[0].Type != synccore.PartAction ||
		m.Parts[0].ActionType != "set_approval_mode" {
		t.Fatalf("action message %+v", m)
	}
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "set_model", "value": "scripted"}).
		expect(t, http.StatusOK, &m)
	if m.Parts[0].ActionType != "set_model" || m.Parts[0].State != synccore.ActionCompleted {
		t.Fatalf("set_model %+v", m.Parts[0])
	}
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "explode"}).
		expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{}).
		expectError(t, http.StatusBadRequest, synccore.CodeBadRequest)
}
