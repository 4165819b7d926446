package bindings

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// SendOptions.Delivery against the real server: a queued message waits for
// the running turn and gets a turn of its own; an interrupting one stops
// the running turn.
func TestSendDelivery(t *testing.T) {
	t.Parallel()
	srv := startServer(t, model.Speed{Delta: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := (&API{BaseURL: srv.URL}).CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Runtime: testRuntime(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	text := func(s string) []synccore.Part { return []synccore.Part{{Type: synccore.PartText, Text: s}} }
	agentOf := func(v View, turn string) (*synccore.Message, bool) {
		for _, m := range v.Messages.All() {
			if m.Role == synccore.RoleAgent && m.TurnID == turn {
				return m, true
			}
		}
		return nil, false
	}
	first, err := c.Send(ctx, text("scenario:text chars=20000 delta=5")...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFor(ctx, func(v View) bool { _, ok := agentOf(v, first.TurnID); return ok }); err != nil {
		t.Fatal(err)
	}
	queued, err := c.SendWith(ctx, text("scenario:text chars=100"), SendOptions{Delivery: DeliveryQueue})
	if err != nil {
		t.Fatal(err)
	}
	if queued.TurnID == first.TurnID || deliveryPart(queued) != "queue" {
		t.Fatalf("queued: turn %s (running %s), delivery %q", queued.TurnID, first.TurnID, deliveryPart(queued))
	}
	instead, err := c.SendWith(ctx, text("scenario:text chars=100"), SendOptions{Delivery: DeliveryInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	// The interrupt stops the first turn, then is answered before the queued one.
	if err := c.WaitFor(ctx, func(v View) bool {
		a, ok := agentOf(v, queued.TurnID)
		return ok && a.State == synccore.MessageDone
	}); err != nil {
		t.Fatal(err)
	}
	v := c.View()
	a1, _ := agentOf(v, first.TurnID)
	ai, ok := agentOf(v, instead.TurnID)
	aq, _ := agentOf(v, queued.TurnID)
	if !ok || ai.State != synccore.MessageDone || ai.Sequence > aq.Sequence {
		t.Fatalf("the interrupting message was not answered before the queued one")
	}
	var stopped bool
	for _, p := range a1.Parts {
		stopped = stopped || p.Type == synccore.PartAction && p.ActionType == string(ActionStop)
	}
	if !stopped || a1.State != synccore.MessageDone {
		t.Fatalf("the first turn: %s, stopped %v", a1.State, stopped)
	}
	if _, err := c.SendWith(ctx, text("x"), SendOptions{Delivery: "later"}); !errors.Is(err, synccore.ErrBadRequest) {
		t.Fatalf("an unknown delivery: %v", err)
	}
}

func deliveryPart(m synccore.Message) string {
	for _, p := range m.Parts {
		if p.Type == synccore.PartData && p.DataType == httpwire.DataTypeDelivery {
			d, _ := p.Data.(map[string]any)
			s, _ := d["delivery"].(string)
			return s
		}
	}
	return ""
}
