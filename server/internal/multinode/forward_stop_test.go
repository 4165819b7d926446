package multinode

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// The chat's stop (POST /v1/chat/{id}/stop, what useChat's stop() sends
// through withServerStop) on a node that does not serve the session
// reaches the owner: the turn stops there, its message closes with the
// stop's action part and its pending interaction is cancelled. A second
// stop finds nothing running: 204.
func TestChatStopOnAnotherNodeStopsTheOwner(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := a.createSession()
	if r := a.post(sid, "scenario:approval"); r.status != http.StatusCreated {
		t.Fatalf("post: %d %s", r.status, r.body)
	}
	var interaction, messageID string
	waitFor(t, 10*time.Second, "a pending approval", func() bool {
		for _, m := range a.history(sid) {
			for _, p := range m.Parts {
				if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
					interaction, messageID = p.InteractionID, m.MessageID
					return true
				}
			}
		}
		return false
	})

	// A stop naming another message (a late stop of an earlier turn) stops nothing.
	if r := c.send("POST", "/v1/chat/"+sid+"/stop", `{"message_id":"msg_earlier"}`, nil); r.status != http.StatusNoContent {
		t.Fatalf("a stop of another message: %d %s", r.status, r.body)
	}
	r := c.send("POST", "/v1/chat/"+sid+"/stop", `{"message_id":"`+messageID+`"}`, nil)
	if r.status != http.StatusOK {
		t.Fatalf("stop on c: %d %s", r.status, r.body)
	}
	var msg synccore.Message
	if err := json.Unmarshal(r.body, &msg); err != nil {
		t.Fatal(err)
	}
	h := a.history(sid)
	last := h[len(h)-1]
	if msg.MessageID != messageID || last.MessageID != messageID || last.State != synccore.MessageDone {
		t.Fatalf("after the stop: answer %s, history %s", msg.MessageID, summary(h))
	}
	var stopped bool
	for _, p := range last.Parts {
		switch {
		case p.Type == synccore.PartInteraction && p.InteractionID == interaction && p.Status != synccore.InteractionCancelled:
			t.Fatalf("the pending interaction is %s after the stop, want cancelled", p.Status)
		case p.Type == synccore.PartAction && p.ActionType == "stop":
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("no stop action part: %+v", last.Parts)
	}
	if r := c.send("POST", "/v1/chat/"+sid+"/stop", "", nil); r.status != http.StatusNoContent {
		t.Fatalf("a stop with nothing running: %d %s", r.status, r.body)
	}
}
