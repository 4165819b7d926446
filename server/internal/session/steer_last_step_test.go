package session

import (
	"fmt"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// A steer sent while the turn's last step streams (a text-only step: no
// tool is to run, so without the steer the step would close the message)
// keeps the turn open: the step commits the message still streaming, the
// next step reads the steer behind a read marker, and only that step
// closes the message. Nothing starts a second turn.
func TestSteerDuringTheLastStepGetsAnotherStep(t *testing.T) {
	e := newEnv(t, Config{})
	g := e.gated
	sid := e.session("gated")
	d := e.driver(sid)
	first := e.post(sid, "go")

	// Step 1 has streamed all its text; its end and finish are still to come.
	for b := 0; b < g.bursts-1; b++ {
		g.awaitBurst(t, b)
		g.release <- struct{}{}
	}
	g.awaitBurst(t, g.bursts-1)
	steer := e.post(sid, "one more thing")
	if steer.TurnID != first.TurnID {
		t.Fatalf("steer turn %s, running turn %s", steer.TurnID, first.TurnID)
	}
	g.release <- struct{}{} // step 1 finishes: it must not close the message

	// Step 2: the model is asked again, and streams in full.
	for b := 0; b < g.bursts; b++ {
		g.awaitBurst(t, b)
		g.release <- struct{}{}
	}
	e.waitIdle()
	d.converge()

	h := e.history(sid)
	// The agent message was created by step 1, before the steer came.
	if len(h) != 3 || h[0].Sequence != first.Sequence || h[2].Sequence != steer.Sequence {
		t.Fatalf("history %d messages, want the post, one agent message and the steer", len(h))
	}
	agent := h[1]
	if agent.Role != synccore.RoleAgent || agent.TurnID != first.TurnID || agent.State != synccore.MessageDone {
		t.Fatalf("agent message role %s turn %s state %s", agent.Role, agent.TurnID, agent.State)
	}
	var marker *synccore.Part
	texts := 0
	for i := range agent.Parts {
		p := &agent.Parts[i]
		switch {
		case p.Type == synccore.PartData && p.DataType == DataTypeRead:
			if marker != nil {
				t.Fatal("two read markers for one steer")
			}
			marker = p
			if texts != 1 {
				t.Fatalf("the marker follows %d text parts, want step 1's one", texts)
			}
		case p.Type == synccore.PartText:
			texts++
			if p.Text != g.fullText() || p.State != synccore.StateDone {
				t.Fatalf("text part %d: %q (%s)", texts, p.Text, p.State)
			}
		}
	}
	if marker == nil {
		t.Fatal("no read marker: no step read the steer")
	}
	// The number's Go type is the decoder's choice (a small msgpack int).
	if data, _ := marker.Data.(map[string]any); fmt.Sprint(data["user_sequence"]) != fmt.Sprint(steer.Sequence) {
		t.Fatalf("read marker %v, want user_sequence %d", marker.Data, steer.Sequence)
	}
	if texts != 2 {
		t.Fatalf("%d text parts, want one per step", texts)
	}
	// The driver's view converged on the committed message.
	if v, ok := d.viewAgent(); !ok || v.State != synccore.MessageDone || len(v.Parts) != len(agent.Parts) {
		t.Fatalf("the client's view of the agent message: ok %v, %d parts", ok, len(v.Parts))
	}
}
