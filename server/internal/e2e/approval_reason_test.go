package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// TestApprovalReason: an approval says why it is asked, so a UI can explain
// why send_email still asks under "auto" (the tool always does) while the
// weather tool asks only under "ask".
func TestApprovalReason(t *testing.T) {
	s := newServer(t, serverOpts{})
	for _, c := range []struct{ mode, prompt, want string }{
		{session.ApprovalAuto, "scenario:approval", session.ReasonToolRequiresApproval},
		{session.ApprovalAsk, "scenario:tools", session.ReasonApprovalModeAsk},
	} {
		sid := s.createSession()
		s.do("POST", "/v1/sessions/"+sid+"/actions", map[string]any{"action_type": "set_approval_mode", "value": c.mode}).expect(t, http.StatusOK, nil)
		s.say(sid, c.prompt)
		var reason any
		s.waitFor(sid, 30*time.Second, "a pending approval", func(msgs []synccore.Message) bool {
			for _, m := range msgs {
				for _, p := range partsOf(m, synccore.PartInteraction) {
					if req, ok := p.Request.(map[string]any); ok && p.Status == synccore.InteractionPending {
						reason = req["reason"]
						return true
					}
				}
			}
			return false
		})
		if fmt.Sprint(reason) != c.want {
			t.Errorf("mode %s, %s: reason %v, want %s", c.mode, c.prompt, reason, c.want)
		}
	}
}
