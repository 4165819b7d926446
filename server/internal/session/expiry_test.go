package session

import (
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// An interaction that carries expires_at and is not answered by then is
// closed (cancelled, response {"expired": true}), its tool ends
// output-error, and the turn goes on to a normal end. An answer after the
// deadline is not_pending.
func TestInteractionExpires(t *testing.T) {
	for _, scenario := range []string{"scenario:approval", "scenario:question"} {
		t.Run(scenario, func(t *testing.T) {
			e := newEnv(t, Config{InteractionTimeout: 300 * time.Millisecond})
			sid := e.session("")
			d := e.driver(sid)
			e.post(sid, scenario)
			e.waitIdle()
			d.converge()
			agent := e.lastAgent(sid)
			if agent.State != synccore.MessageDone || len(partsOf(agent, synccore.PartError)) != 0 {
				t.Fatalf("the turn did not go on to its end: %s, errors %+v", agent.State, partsOf(agent, synccore.PartError))
			}
			ints := partsOf(agent, synccore.PartInteraction)
			tools := partsOf(agent, synccore.PartTool)
			if len(ints) != 1 || len(tools) < 1 {
				t.Fatalf("parts: %+v", agent.Parts)
			}
			in := ints[0]
			req, _ := in.Request.(map[string]any)
			at, err := time.Parse(time.RFC3339Nano, req["expires_at"].(string))
			if err != nil || in.Status != synccore.InteractionCancelled {
				t.Fatalf("interaction %s, expires_at %v (%v)", in.Status, req["expires_at"], err)
			}
			if resp, _ := in.Response.(map[string]any); resp["expired"] != true {
				t.Fatalf("response %v, want expired", in.Response)
			}
			if tools[0].State != synccore.ToolOutputError {
				t.Fatalf("tool %s, want output-error", tools[0].State)
			}
			if time.Now().Before(at) {
				t.Fatalf("closed before its deadline %v", at)
			}
			_, err = e.m.Answer(e.ctx, sid, in.InteractionID, map[string]any{"approved": true, "answer": "late"})
			wantCode(t, err, synccore.CodeNotPending)
		})
	}
}
