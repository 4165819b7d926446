package session

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// A client that subscribes in the middle of a step sees everything streamed
// so far (the projection right after the hello), then the live deltas.
func TestMidStreamJoinSeesTheWholeText(t *testing.T) {
	e := newEnv(t, Config{})
	g := e.gated
	sid := e.session("gated")
	early := e.driver(sid)
	e.post(sid, "go")
	g.awaitBurst(t, 0)

	late := e.driver(sid)
	if len(late.frames) < 2 || late.frames[0].Kind != synccore.FrameHello {
		t.Fatalf("late frames %+v", late.frames)
	}
	proj := late.frames[1]
	if proj.Kind != synccore.FramePart || proj.Part.Text != g.burstText(0) || proj.Part.State != synccore.StateStreaming {
		t.Fatalf("the join frame is %+v, want the text so far %q", proj, g.burstText(0))
	}
	// Mid-stream, the client's view already holds the text so far.
	late.pumpUntil("the projection in the late view", func() bool {
		m, ok := late.viewAgent()
		return ok && textOf(m, synccore.PartText) == g.burstText(0)
	})

	g.release <- struct{}{}
	g.awaitBurst(t, 1)
	g.release <- struct{}{}
	g.awaitBurst(t, 2)
	// The next deltas land right after what the join frame carried.
	late.pumpUntil("live deltas", func() bool {
		m, ok := late.viewAgent()
		return ok && textOf(m, synccore.PartText) == g.burstText(0)+g.burstText(1)+g.burstText(2)
	})
	for _, f := range late.frames[2:] {
		if f.Kind == synccore.FrameDelta && f.Offset < int64(len(g.burstText(0))) {
			t.Fatalf("a delta at offset %d repeats what the join frame carried", f.Offset)
		}
	}
	g.release <- struct{}{}
	early.converge()
	late.converge()
	if got := textOf(e.lastAgent(sid), synccore.PartText); got != g.fullText() {
		t.Fatalf("committed %q", got)
	}
	checkSeqs(t, late.frames)
}

// A subscriber that does not read is dropped with a resync frame past its
// queue bound; a reading one gets every frame; the session never waits.
func TestSlowSubscriberIsResynced(t *testing.T) {
	// 3 bursts of 10 deltas of 5 bytes: the slow subscriber's queue folds
	// them into one frame, and passes 100 bytes of text in the third.
	e := newEnv(t, Config{QueueLimit: 16, QueueBytes: 100})
	g := e.gated
	sid := e.session("gated")
	fast := e.driver(sid)
	slow, err := e.m.Subscribe(e.ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	e.post(sid, "go")
	for b := 0; b < g.bursts; b++ {
		g.awaitBurst(t, b)
		fast.pumpUntil("the burst", func() bool {
			m, ok := fast.viewAgent()
			return ok && len(textOf(m, synccore.PartText)) >= len(g.burstText(0))*(b+1)
		})
		g.release <- struct{}{}
	}
	fast.converge()
	if fast.subs != 1 {
		t.Fatalf("the fast subscriber resubscribed %d times", fast.subs-1)
	}
	checkSeqs(t, fast.frames)

	// It read nothing: it gets its hello (a subscription opens with
	// hello, protocol §4), then the resync.
	frames, err := slow.Next(e.ctx)
	if err != nil || len(frames) != 2 || frames[0].Kind != synccore.FrameHello || frames[1].Kind != synccore.FrameResync || frames[1].Code != "slow_consumer" {
		t.Fatalf("slow subscriber got %+v, %v", frames, err)
	}
	if frames[1].Seq != 2 {
		t.Fatalf("resync seq %d does not follow the hello", frames[1].Seq)
	}
	if _, err := slow.Next(e.ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("after the resync: %v, want EOF", err)
	}
}

// Action placement: on an idle session an action is a message of its own;
// while the turn's message streams it is appended to it, and the stream
// goes on from the checkpoint without losing or doubling text.
func TestActionPlacement(t *testing.T) {
	e := newEnv(t, Config{})
	g := e.gated
	sid := e.session("gated")
	d := e.driver(sid)

	own, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetModel, Value: "gated"})
	if err != nil {
		t.Fatal(err)
	}
	if own.Role != synccore.RoleAgent || own.State != synccore.MessageDone || len(own.Parts) != 1 ||
		own.Parts[0].Type != synccore.PartAction || own.Parts[0].State != synccore.ActionCompleted ||
		own.Parts[0].ActionType != ActionSetModel || own.Parts[0].ActionID == "" || own.Parts[0].Title == "" {
		t.Fatalf("idle action message %+v", own)
	}

	e.post(sid, "go")
	g.awaitBurst(t, 0)
	in, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionSetApprovalMode, Value: ApprovalAsk})
	if err != nil {
		t.Fatal(err)
	}
	if in.State != synccore.MessageStreaming || in.Sequence != own.Sequence+2 {
		t.Fatalf("the action went to message %d (%s)", in.Sequence, in.State)
	}
	last := in.Parts[len(in.Parts)-1]
	if last.Type != synccore.PartAction || last.ActionType != ActionSetApprovalMode {
		t.Fatalf("parts %+v", in.Parts)
	}
	if in.Parts[0].Text != g.burstText(0) {
		t.Fatalf("the checkpoint holds %q", in.Parts[0].Text)
	}
	g.release <- struct{}{}
	g.awaitBurst(t, 1)
	g.release <- struct{}{}
	g.awaitBurst(t, 2)
	g.release <- struct{}{}
	d.converge()
	a := e.lastAgent(sid)
	if textOf(a, synccore.PartText) != g.fullText() || len(partsOf(a, synccore.PartAction)) != 1 {
		t.Fatalf("final %+v", a.Parts)
	}
	late := e.driver(sid)
	late.converge()
	if late.c.Digest() != d.c.Digest() {
		t.Fatal("two clients disagree")
	}

	_, err = e.m.Action(e.ctx, sid, Action{ActionType: ActionSetModel, Value: "gpt-nope"})
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = e.m.Action(e.ctx, sid, Action{ActionType: ActionSetApprovalMode, Value: "sometimes"})
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = e.m.Action(e.ctx, sid, Action{ActionType: "explode"})
	wantCode(t, err, synccore.CodeBadRequest)
}

func TestStopMidStream(t *testing.T) {
	e := newEnv(t, Config{})
	g := e.gated
	sid := e.session("gated")
	d := e.driver(sid)
	_, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionStop})
	wantCode(t, err, synccore.CodeConflict) // nothing runs

	e.post(sid, "go")
	g.awaitBurst(t, 0)
	msg, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionStop})
	if err != nil {
		t.Fatal(err)
	}
	if msg.State != synccore.MessageDone || len(msg.Parts) != 3 {
		t.Fatalf("stopped message %+v", msg)
	}
	txt, act, ep := msg.Parts[0], msg.Parts[1], msg.Parts[2]
	if txt.Text != g.burstText(0) || txt.State != synccore.StateDone {
		t.Fatalf("text %+v", txt)
	}
	if act.Type != synccore.PartAction || act.ActionType != ActionStop || act.State != synccore.ActionCompleted {
		t.Fatalf("action %+v", act)
	}
	if ep.Type != synccore.PartError || ep.Code != CodeStopped || ep.Scope != synccore.ErrorScopeTurn {
		t.Fatalf("error %+v", ep)
	}
	d.converge()
	_, err = e.m.Action(e.ctx, sid, Action{ActionType: ActionStop})
	wantCode(t, err, synccore.CodeConflict)
}

// Stopping a turn suspended on an approval cancels the interaction, and a
// late answer is refused.
func TestStopWhileAwaitingApproval(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "scenario:approval")
	ip := awaitPending(t, d)
	msg, err := e.m.Action(e.ctx, sid, Action{ActionType: ActionStop})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range msg.Parts {
		switch p.Type {
		case synccore.PartInteraction:
			if p.Status != synccore.InteractionCancelled {
				t.Fatalf("interaction %s", p.Status)
			}
		case synccore.PartTool:
			if p.State != synccore.ToolOutputError {
				t.Fatalf("tool %s", p.State)
			}
		}
	}
	_, err = e.m.Answer(e.ctx, sid, ip.InteractionID, true)
	wantCode(t, err, synccore.CodeNotPending)
	d.converge()
}

// Shutdown closes every streaming message (error "shutdown"), ends the
// subscriptions, and refuses new work.
func TestShutdownLeavesNothingStreaming(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("gated")
	other := e.session("")
	sub, err := e.m.Subscribe(e.ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	e.post(sid, "go")
	e.gated.awaitBurst(t, 0)
	e.post(other, "scenario:approval") // suspended on an approval
	deadline := time.Now().Add(5 * time.Second)
	for len(partsOf(e.lastAgentOrEmpty(other), synccore.PartInteraction)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no approval asked")
		}
		time.Sleep(time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
	defer cancel()
	if err := e.m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{sid, other} {
		for _, m := range e.history(id) {
			if m.State == synccore.MessageStreaming {
				t.Fatalf("message %d of %s still streaming", m.Sequence, id)
			}
		}
		a := e.lastAgent(id)
		if ep := a.Parts[len(a.Parts)-1]; ep.Type != synccore.PartError || ep.Code != CodeShutdown {
			t.Fatalf("last part %+v", ep)
		}
	}
	for {
		_, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("subscription: %v", err)
		}
	}
	_, err = e.m.PostMessage(e.ctx, sid, PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: "x"}}})
	wantCode(t, err, synccore.CodeClosed)
}

func (e *env) lastAgentOrEmpty(sid string) synccore.Message {
	h := e.history(sid)
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == synccore.RoleAgent {
			return h[i]
		}
	}
	return synccore.Message{}
}
