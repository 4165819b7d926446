package session

import (
	"context"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// recording is the gated model, keeping the user texts each call read.
type recording struct {
	*gated
	mu    sync.Mutex
	calls [][]string
}

func (r *recording) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	var users []string
	for _, m := range req.Messages {
		if m.Role != model.RoleUser {
			continue
		}
		for _, c := range m.Content {
			if c.Type == model.ContentText {
				users = append(users, c.Text)
			}
		}
	}
	r.mu.Lock()
	r.calls = append(r.calls, users)
	r.mu.Unlock()
	return r.gated.Stream(ctx, req, emit)
}

func (r *recording) read() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.calls...)
}

func deliveryEnv(t *testing.T) (*env, *recording) {
	rec := &recording{gated: newGated()}
	e := newEnv(t, Config{Models: model.Registry{model.DefaultName: scripted.Scripted{}, "gated": rec}})
	e.gated = rec.gated
	return e, rec
}

func (e *env) postWith(sid, text string, d httpwire.Delivery) synccore.Message {
	e.t.Helper()
	msg, err := e.m.PostMessage(e.ctx, sid, PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: text}}, Delivery: string(d)})
	if err != nil {
		e.t.Fatalf("post %q (%s): %v", text, d, err)
	}
	return msg
}

func (g *gated) releaseStep(t *testing.T, from int) {
	t.Helper()
	for b := from; b < g.bursts; b++ {
		if b > from {
			g.awaitBurst(t, b)
		}
		g.release <- struct{}{}
	}
}

func deliveryOf(m synccore.Message) string {
	for _, p := range m.Parts {
		if p.Type == synccore.PartData && p.DataType == httpwire.DataTypeDelivery {
			d, _ := p.Data.(map[string]any)
			s, _ := d["delivery"].(string)
			return s
		}
	}
	return ""
}

// A message queued while a turn runs waits for it: the running turn never
// reads it, it shows as queued (its delivery part, a turn id of its own),
// and the next turn answers it after the first one's answer.
func TestDeliveryQueueIsTheNextTurn(t *testing.T) {
	e, rec := deliveryEnv(t)
	g := e.gated
	sid := e.session("gated")
	d := e.driver(sid)
	first := e.post(sid, "go")
	g.awaitBurst(t, 0)
	queued := e.postWith(sid, "afterwards", httpwire.DeliveryQueue)
	if queued.TurnID == first.TurnID || deliveryOf(queued) != "queue" {
		t.Fatalf("queued message: turn %s (running %s), delivery %q", queued.TurnID, first.TurnID, deliveryOf(queued))
	}
	g.releaseStep(t, 0) // the first turn's only step: it closes its message
	g.awaitBurst(t, 0)  // the queued message's turn
	g.releaseStep(t, 0)
	e.waitIdle()
	d.converge()

	calls := rec.read()
	if len(calls) != 2 || len(calls[0]) != 1 || calls[0][0] != "go" || calls[1][len(calls[1])-1] != "afterwards" {
		t.Fatalf("model calls read %q, want [go] then [... afterwards]", calls)
	}
	h := e.history(sid)
	if len(h) != 4 || h[1].Role != synccore.RoleAgent || h[1].TurnID != first.TurnID || h[3].Role != synccore.RoleAgent || h[3].TurnID != queued.TurnID {
		t.Fatalf("history: %+v", summaryOf(h))
	}
	for _, m := range []synccore.Message{h[1], h[3]} {
		if m.State != synccore.MessageDone || len(partsOf(m, synccore.PartError)) != 0 {
			t.Fatalf("agent message %s: %s with errors %v", m.MessageID, m.State, partsOf(m, synccore.PartError))
		}
	}
}

// An interrupting message stops the running turn (its message closes with
// the stop's action part) and a turn of its own answers it.
func TestDeliveryInterruptStopsThenAnswers(t *testing.T) {
	e, rec := deliveryEnv(t)
	g := e.gated
	sid := e.session("gated")
	d := e.driver(sid)
	first := e.post(sid, "go")
	g.awaitBurst(t, 0)
	instead := e.postWith(sid, "do this instead", httpwire.DeliveryInterrupt)
	if instead.TurnID == first.TurnID || deliveryOf(instead) != "interrupt" {
		t.Fatalf("interrupting message: turn %s (running %s), delivery %q", instead.TurnID, first.TurnID, deliveryOf(instead))
	}
	g.awaitBurst(t, 0) // the new turn: the first one was stopped while it waited
	g.releaseStep(t, 0)
	e.waitIdle()
	d.converge()

	calls := rec.read()
	if len(calls) != 2 || calls[1][len(calls[1])-1] != "do this instead" {
		t.Fatalf("model calls read %q", calls)
	}
	h := e.history(sid)
	var stopped, answered bool
	for _, m := range h {
		if m.Role != synccore.RoleAgent {
			continue
		}
		switch m.TurnID {
		case first.TurnID:
			for _, p := range partsOf(m, synccore.PartAction) {
				stopped = stopped || p.ActionType == ActionStop && m.State == synccore.MessageDone
			}
		case instead.TurnID:
			answered = m.State == synccore.MessageDone && textOf(m, synccore.PartText) == g.fullText()
		}
	}
	if !stopped || !answered {
		t.Fatalf("stopped %v, answered %v: %v", stopped, answered, summaryOf(h))
	}
}

// A steer (the default) still joins the running turn; an unknown delivery
// is refused.
func TestDeliverySteerIsTheDefault(t *testing.T) {
	e, _ := deliveryEnv(t)
	g := e.gated
	sid := e.session("gated")
	first := e.post(sid, "go")
	g.awaitBurst(t, 0)
	steer := e.postWith(sid, "also", httpwire.DeliverySteer)
	if steer.TurnID != first.TurnID || deliveryOf(steer) != "" {
		t.Fatalf("steer: turn %s (running %s), delivery %q", steer.TurnID, first.TurnID, deliveryOf(steer))
	}
	_, err := e.m.PostMessage(e.ctx, sid, PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: "x"}}, Delivery: "later"})
	wantCode(t, err, synccore.CodeBadRequest)
	g.releaseStep(t, 0)
	g.awaitBurst(t, 0) // the step that reads the steer
	g.releaseStep(t, 0)
	e.waitIdle()
}

func summaryOf(h []synccore.Message) []string {
	var out []string
	for _, m := range h {
		out = append(out, string(m.Role)+"/"+m.TurnID+"/"+string(m.State))
	}
	return out
}
