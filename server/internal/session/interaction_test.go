package session

import (
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// awaitPending pumps the client until the view shows a pending interaction.
func awaitPending(t *testing.T, d *driver) synccore.Part {
	t.Helper()
	var p synccore.Part
	d.pumpUntil("a pending interaction", func() bool {
		var ok bool
		p, ok = d.pending()
		return ok
	})
	return p
}

func toolOf(t *testing.T, m synccore.Message, name string) synccore.Part {
	t.Helper()
	for _, p := range m.Parts {
		if p.Type == synccore.PartTool && p.ToolName == name {
			return p
		}
	}
	t.Fatalf("no %s tool in %+v", name, m.Parts)
	return synccore.Part{}
}

func TestApprovalApprove(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:approval")
	ip := awaitPending(t, d)
	if kind, _ := ip.Request.(map[string]any)["kind"].(string); kind != KindApproval {
		t.Fatalf("request %+v", ip.Request)
	}
	if tool := toolOf(t, e.lastAgent(sid), "send_email"); tool.State != synccore.ToolAwaitingApproval {
		t.Fatalf("tool state %s", tool.State)
	}
	msg, err := e.m.Answer(e.ctx, sid, ip.InteractionID, map[string]any{"approved": true})
	if err != nil {
		t.Fatal(err)
	}
	// Interaction and tool changed in the one commit Answer returns.
	if tool := toolOf(t, msg, "send_email"); tool.State != synccore.ToolRunning {
		t.Fatalf("after approval the tool is %s", tool.State)
	}
	d.converge()
	a := e.lastAgent(sid)
	if tool := toolOf(t, a, "send_email"); tool.State != synccore.ToolOutputAvailable {
		t.Fatalf("tool %s", tool.State)
	}
	if !strings.Contains(textOf(a, synccore.PartText), "the email was sent") {
		t.Fatalf("answer %q", textOf(a, synccore.PartText))
	}
	// Answering again: not pending, and nothing changes.
	_, err = e.m.Answer(e.ctx, sid, ip.InteractionID, map[string]any{"approved": false})
	wantCode(t, err, synccore.CodeNotPending)
	if again := e.lastAgent(sid); again.Revision != a.Revision {
		t.Fatal("a refused answer changed the message")
	}
	_, err = e.m.Answer(e.ctx, sid, "int_nope", true)
	wantCode(t, err, synccore.CodeNotFound)
	_, err = e.m.Answer(e.ctx, "ses_nope", ip.InteractionID, true)
	wantCode(t, err, synccore.CodeNotFound)
}

func TestApprovalDeny(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:approval")
	ip := awaitPending(t, d)
	// A malformed response is refused and the interaction stays pending.
	_, err := e.m.Answer(e.ctx, sid, ip.InteractionID, map[string]any{"answer": "yes"})
	wantCode(t, err, synccore.CodeBadRequest)
	msg, err := e.m.Answer(e.ctx, sid, ip.InteractionID, false)
	if err != nil {
		t.Fatal(err)
	}
	if tool := toolOf(t, msg, "send_email"); tool.State != synccore.ToolOutputDenied {
		t.Fatalf("tool %s", tool.State)
	}
	d.converge()
	a := e.lastAgent(sid)
	if !strings.Contains(textOf(a, synccore.PartText), "did not send") {
		t.Fatalf("answer %q", textOf(a, synccore.PartText))
	}
	for _, p := range partsOf(a, synccore.PartInteraction) {
		if p.Status != synccore.InteractionResolved || p.Response.(map[string]any)["approved"] != false {
			t.Fatalf("interaction %+v", p)
		}
	}
}

// In "ask" mode every tool waits for approval.
func TestApprovalModeAsk(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	if _, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetApprovalMode, Value: ApprovalAsk}); err != nil {
		t.Fatal(err)
	}
	e.post(sid, "scenario:tools")
	answered := map[string]bool{}
	for i := 0; i < 2; i++ { // get_weather, then calculator
		var ip synccore.Part
		d.pumpUntil("the next pending interaction", func() bool {
			var ok bool
			ip, ok = d.pending()
			return ok && !answered[ip.InteractionID]
		})
		answered[ip.InteractionID] = true
		if _, err := e.m.Answer(e.ctx, sid, ip.InteractionID, map[string]any{"approved": true}); err != nil {
			t.Fatal(err)
		}
	}
	d.converge()
	if got := len(partsOf(e.lastAgent(sid), synccore.PartInteraction)); got != 2 {
		t.Fatalf("%d interactions", got)
	}
}

func TestQuestion(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:question")
	ip := awaitPending(t, d)
	if q, _ := ip.Request.(map[string]any)["question"].(string); q == "" {
		t.Fatalf("request %+v", ip.Request)
	}
	msg, err := e.m.Answer(e.ctx, sid, ip.InteractionID, map[string]any{"answer": "teal"})
	if err != nil {
		t.Fatal(err)
	}
	if tool := toolOf(t, msg, "ask_user"); tool.State != synccore.ToolOutputAvailable {
		t.Fatalf("tool %s", tool.State)
	}
	d.converge()
	if txt := textOf(e.lastAgent(sid), synccore.PartText); !strings.Contains(txt, `"teal"`) {
		t.Fatalf("answer %q", txt)
	}
}

// A user message while a turn runs joins it: same turn_id, one agent
// message, and the next model step reads it.
func TestSteerJoinsTheRunningTurn(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	first := e.post(sid, "scenario:approval")
	ip := awaitPending(t, d)
	steer := e.post(sid, "also cc the boss")
	if steer.TurnID != first.TurnID {
		t.Fatalf("steer turn %s, running turn %s", steer.TurnID, first.TurnID)
	}
	if _, err := e.m.Answer(e.ctx, sid, ip.InteractionID, true); err != nil {
		t.Fatal(err)
	}
	d.converge()
	h := e.history(sid)
	if len(h) != 3 || h[1].Role != synccore.RoleAgent || h[1].TurnID != first.TurnID {
		t.Fatalf("history: %d messages", len(h))
	}
	if txt := textOf(h[1], synccore.PartText); !strings.Contains(txt, "You said: “also cc the boss”") {
		t.Fatalf("the model did not see the steer: %q", txt)
	}
	// After the turn ends, a message starts a new turn.
	next := e.post(sid, "scenario:text chars=5")
	if next.TurnID == first.TurnID {
		t.Fatal("a message after the turn joined it")
	}
	d.converge()
}
