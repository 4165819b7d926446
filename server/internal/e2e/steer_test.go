package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// TestSteerReadMarker: a message sent while a turn runs is read by the
// turn's next step, and the agent message says where: a data part
// agentsync.read {user_sequence} right before the first part written after
// reading it. What precedes the marker was written before the steer was read.
func TestSteerReadMarker(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	s.say(sid, "scenario:approval")
	ip := s.pendingInteraction(sid)
	steer := s.say(sid, "also cc the boss")
	s.answer(sid, ip.InteractionID, map[string]any{"approved": true}).expect(t, http.StatusOK, nil)
	msgs := s.waitIdle(sid, 3)

	agent := msgs[1]
	if agent.Role != synccore.RoleAgent || msgs[2].MessageID != steer.MessageID {
		t.Fatalf("history: %s", summary(msgs))
	}
	marker := -1
	for i, p := range agent.Parts {
		if p.Type == synccore.PartData && p.DataType == session.DataTypeRead {
			if marker >= 0 {
				t.Fatalf("two read markers for one steer")
			}
			marker = i
			data, _ := p.Data.(map[string]any)
			if fmt.Sprint(data["user_sequence"]) != fmt.Sprint(steer.Sequence) {
				t.Fatalf("marker data %v, steer sequence %d", p.Data, steer.Sequence)
			}
		}
	}
	if marker < 0 {
		t.Fatalf("no read marker in %+v", agent.Parts)
	}
	text := func(parts []synccore.Part) string {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	before, after := text(agent.Parts[:marker]), text(agent.Parts[marker+1:])
	if strings.Contains(before, "also cc the boss") || !strings.Contains(after, "You said: “also cc the boss”") {
		t.Fatalf("the reply to the steer is not after the marker:\nbefore %q\nafter %q", before, after)
	}

	// A turn without a steer has no marker.
	other := s.createSession()
	s.say(other, "scenario:tools")
	for _, m := range s.waitIdle(other, 2) {
		for _, p := range m.Parts {
			if p.DataType == session.DataTypeRead {
				t.Fatalf("a marker without a steer: %+v", p)
			}
		}
	}
}

// TestSteerOfAToolLoopIsReadOnce: a steer that asks for a tool loop, sent
// while a turn waits on an approval, is read once by the step after the
// answer, and the loop ends with one answer instead of calling its tools
// again at every step until too_many_steps (issue 26: the composer placed
// the steer after the whole agent message, so every step read it as new).
func TestSteerOfAToolLoopIsReadOnce(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	s.say(sid, "scenario:approval")
	ip := s.pendingInteraction(sid)
	s.say(sid, "scenario:tools")
	s.answer(sid, ip.InteractionID, map[string]any{"approved": true}).expect(t, http.StatusOK, nil)
	msgs := s.waitIdle(sid, 3)
	agent := msgs[1]
	tools := map[string]int{}
	for _, p := range agent.Parts {
		if p.Type == synccore.PartError {
			t.Fatalf("the turn failed: %s: %s", p.Code, p.Message)
		}
		if p.Type == synccore.PartTool {
			tools[p.ToolName]++
		}
	}
	if len(msgs) != 3 || agent.State != synccore.MessageDone {
		t.Fatalf("history: %s", summary(msgs))
	}
	// scenario:tools calls get_weather and calculator once each.
	if tools["get_weather"] != 1 || tools["calculator"] != 1 {
		t.Fatalf("the steer's tools ran %v times, want once each", tools)
	}
}
