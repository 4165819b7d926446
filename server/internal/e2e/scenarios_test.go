package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"

	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// lastAgent returns the last agent message of a history.
func lastAgent(t testing.TB, msgs []synccore.Message) synccore.Message {
	t.Helper()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == synccore.RoleAgent {
			return msgs[i]
		}
	}
	t.Fatalf("no agent message in %s", summary(msgs))
	return synccore.Message{}
}

func partsOf(m synccore.Message, typ synccore.PartType) []synccore.Part {
	var out []synccore.Part
	for _, p := range m.Parts {
		if p.Type == typ {
			out = append(out, p)
		}
	}
	return out
}

// checkClosed asserts the invariants every finished agent message keeps.
func checkClosed(t testing.TB, m synccore.Message) {
	t.Helper()
	if m.State != synccore.MessageDone {
		t.Fatalf("message %d is %q", m.Sequence, m.State)
	}
	for i, p := range m.Parts {
		if p.Sequence != int64(i+1) || p.PartID == "" {
			t.Fatalf("part %d: sequence %d id %q", i, p.Sequence, p.PartID)
		}
		if (p.Type == synccore.PartText || p.Type == synccore.PartReasoning) && p.State != synccore.StateDone {
			t.Fatalf("part %s of a done message is %q", p.PartID, p.State)
		}
		if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
			t.Fatalf("interaction %s still pending in a done message", p.InteractionID)
		}
	}
}

// TestScenarios plays every scripted scenario that needs no answer.
func TestScenarios(t *testing.T) {
	s := newServer(t, serverOpts{})
	check := map[string]func(t *testing.T, m synccore.Message){
		"help": func(t *testing.T, m synccore.Message) {
			for _, sc := range scripted.Scenarios {
				if !strings.Contains(textOf(m), "- "+sc.Name+":") {
					t.Errorf("help does not list %q", sc.Name)
				}
			}
		},
		"text chars=500 delta=3": func(t *testing.T, m synccore.Message) {
			if n := len([]rune(textOf(m))); n != 500 {
				t.Errorf("text has %d runes, want 500", n)
			}
		},
		"reasoning chars=100": func(t *testing.T, m synccore.Message) {
			if r := partsOf(m, synccore.PartReasoning); len(r) != 1 || r[0].Text == "" || len(partsOf(m, synccore.PartText)) != 1 {
				t.Errorf("reasoning: %s", summary([]synccore.Message{m}))
			}
		},
		"tools city=Oslo": func(t *testing.T, m synccore.Message) {
			tools := partsOf(m, synccore.PartTool)
			if len(tools) != 2 || tools[0].State != synccore.ToolOutputAvailable || tools[1].State != synccore.ToolOutputAvailable {
				t.Fatalf("tools: %s", summary([]synccore.Message{m}))
			}
			steps := map[string]bool{}
			for _, p := range m.Parts {
				steps[p.StepID] = true
			}
			if len(steps) != 3 || !strings.Contains(textOf(m), "In Oslo it is") {
				t.Errorf("want 3 steps in one message ending with the answer; got steps %v, text %q", steps, textOf(m))
			}
		},
		"error chars=100": func(t *testing.T, m synccore.Message) {
			if e := partsOf(m, synccore.PartError); len(e) != 1 || e[0].Code == "" || e[0].Message == "" {
				t.Errorf("error scenario: %s", summary([]synccore.Message{m}))
			}
		},
		"long chars=20000 delta=16": func(t *testing.T, m synccore.Message) {
			if n := len([]rune(textOf(m))); n != 20000 {
				t.Errorf("long has %d runes", n)
			}
		},
		"data": func(t *testing.T, m synccore.Message) {
			d := partsOf(m, synccore.PartData)
			if len(d) != 1 || d[0].DataType != "chart" || d[0].DataID != "chart-1" || d[0].Data == nil {
				t.Errorf("data: %+v", d)
			}
		},
		"file": func(t *testing.T, m synccore.Message) {
			f := partsOf(m, synccore.PartFile)
			if len(f) != 1 || f[0].Filename != "hello.txt" || !strings.HasPrefix(f[0].URL, "data:") {
				t.Errorf("file: %+v", f)
			}
		},
		"nosuch": func(t *testing.T, m synccore.Message) {
			if !strings.Contains(textOf(m), "Unknown scenario") {
				t.Errorf("unknown scenario reply %q", textOf(m))
			}
		},
	}
	for name, fn := range check {
		t.Run(strings.Fields(name)[0], func(t *testing.T) {
			sid := s.createSession()
			s.say(sid, "scenario:"+name)
			msgs := s.waitIdle(sid, 2)
			m := lastAgent(t, msgs)
			checkClosed(t, m)
			fn(t, m)
		})
	}
}

// pendingInteraction waits for the session's pending interaction.
func (s *testServer) pendingInteraction(sid string) synccore.Part {
	s.t.Helper()
	var found synccore.Part
	s.waitFor(sid, 30*time.Second, "a pending interaction", func(msgs []synccore.Message) bool {
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
					found = p
					return true
				}
			}
		}
		return false
	})
	return found
}

func (s *testServer) answer(sid, interactionID string, response any) response {
	s.t.Helper()
	return s.do("POST", fmt.Sprintf("/v1/sessions/%s/interactions/%s", sid, interactionID), map[string]any{"response": response})
}

func TestApproval(t *testing.T) {
	s := newServer(t, serverOpts{})
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprintf("approved=%v", approve), func(t *testing.T) {
			sid := s.createSession()
			s.say(sid, "scenario:approval to=ops@example.com")
			ip := s.pendingInteraction(sid)
			req, _ := ip.Request.(map[string]any)
			if req["kind"] != "approval" || req["tool_call_id"] == nil {
				t.Fatalf("approval request %+v", ip.Request)
			}
			// The gated tool waits for the answer.
			msgs := s.all(sid, true)
			tool := partsOf(lastAgent(t, msgs), synccore.PartTool)
			if len(tool) != 1 || tool[0].State != synccore.ToolAwaitingApproval || tool[0].ToolCallID != req["tool_call_id"] {
				t.Fatalf("tool while awaiting approval: %s", summary(msgs))
			}

			var m synccore.Message
			s.answer(sid, ip.InteractionID, map[string]any{"approved": approve}).expect(t, http.StatusOK, &m)
			if findPart(&m, ip.PartID) == nil {
				t.Fatalf("answer returned a message without the interaction: %s", summary([]synccore.Message{m}))
			}
			msgs = s.waitIdle(sid, 2)
			final := lastAgent(t, msgs)
			checkClosed(t, final)
			tool = partsOf(final, synccore.PartTool)
			inter := partsOf(final, synccore.PartInteraction)
			if len(inter) != 1 || inter[0].Status != synccore.InteractionResolved {
				t.Fatalf("interaction after answer: %s", summary(msgs))
			}
			if approve {
				if tool[0].State != synccore.ToolOutputAvailable || !strings.Contains(textOf(final), "the email was sent") {
					t.Fatalf("approved: %s / %q", summary(msgs), textOf(final))
				}
			} else if tool[0].State != synccore.ToolOutputDenied || !strings.Contains(textOf(final), "did not send") {
				t.Fatalf("denied: %s / %q", summary(msgs), textOf(final))
			}
			// Answering twice is a conflict, not a second run.
			s.answer(sid, ip.InteractionID, map[string]any{"approved": true}).expectError(t, http.StatusConflict, synccore.CodeNotPending)
		})
	}
}

func TestQuestion(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	s.say(sid, "scenario:question")
	ip := s.pendingInteraction(sid)
	if req, _ := ip.Request.(map[string]any); req["kind"] != "question" {
		t.Fatalf("question request %+v", ip.Request)
	}
	s.answer(sid, ip.InteractionID, map[string]any{"answer": "teal"}).expect(t, http.StatusOK, nil)
	msgs := s.waitIdle(sid, 2)
	final := lastAgent(t, msgs)
	checkClosed(t, final)
	if !strings.Contains(textOf(final), `"teal"`) {
		t.Fatalf("question answer not used: %q", textOf(final))
	}
	s.answer(sid, ip.InteractionID, map[string]any{"answer": "again"}).expectError(t, http.StatusConflict, synccore.CodeNotPending)
}

// TestStopMidStream stops a long answer: the message closes, keeps the
// text streamed so far, and records the stop as an action part.
func TestStopMidStream(t *testing.T) {
	s := newServer(t, serverOpts{Speed: model.Paced(time.Millisecond)})
	sid := s.createSession()
	s.say(sid, "scenario:long chars=200000 delta=16")
	w := s.subscribe(sid)
	mir := newMirror(t)
	for mir.deltas < 5 {
		frames, err := w.read(10 * time.Second)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		mir.apply(frames)
	}
	var m synccore.Message
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "stop"}).expect(t, http.StatusOK, &m)
	if a := partsOf(m, synccore.PartAction); len(a) != 1 || a[0].ActionType != "stop" {
		t.Fatalf("stop answered %s", summary([]synccore.Message{m}))
	}
	msgs := s.waitIdle(sid, 2)
	final := lastAgent(t, msgs)
	checkClosed(t, final)
	if n := len([]rune(textOf(final))); n == 0 || n >= 200000 {
		t.Fatalf("stopped message has %d runes", n)
	}
	// Stopping an idle session is a conflict.
	s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "stop"}).expectError(t, http.StatusConflict, synccore.CodeConflict)
}
