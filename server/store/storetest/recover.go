package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

func testRecoverStreaming(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "a")
	NewSession(t, s, "b")

	streaming := AgentMessage("a", 2,
		TextPart(1, synccore.StateDone, "finished text"),
		synccore.Part{PartID: "reasoning:2", Sequence: 2, Type: synccore.PartReasoning, State: synccore.StateStreaming, Text: "hmm"},
		synccore.Part{PartID: "tool:3", Sequence: 3, Type: synccore.PartTool, ToolCallID: "c1", State: synccore.ToolAwaitingApproval},
		synccore.Part{PartID: "interaction:4", Sequence: 4, Type: synccore.PartInteraction, InteractionID: "i1", Status: synccore.InteractionPending},
		synccore.Part{PartID: "tool:5", Sequence: 5, Type: synccore.PartTool, ToolCallID: "c0", State: synccore.ToolOutputAvailable, Output: "ok"},
		TextPart(6, synccore.StateStreaming, "partial"),
		synccore.Part{PartID: "action:7", Sequence: 7, Type: synccore.PartAction, ActionID: "x", State: synccore.ActionPending},
	)
	MustCommit(t, s, "a", UserMessage("a", 1, "go"), streaming)
	closed := AgentMessage("b", 1, TextPart(1, "done", "all good"))
	closed.State = synccore.MessageDone
	MustCommit(t, s, "b", closed, AgentMessage("b", 2)) // b/2: streaming with no parts at all
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart: a new Store on the same data.
	s = open(t, "main")
	var seen []string
	mkErr := func(m synccore.Message) synccore.Part {
		seen = append(seen, fmt.Sprintf("%s/%s@%d/%s", m.SessionID, m.MessageID, m.Revision, m.State))
		return synccore.Part{PartID: "error:restart", Type: synccore.PartError, Scope: synccore.ErrorScopeTurn,
			Code: "server_restarted", Message: "the server restarted"}
	}
	before := s.CommitCount()
	rec, err := s.RecoverStreaming(ctx, mkErr)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 2 || s.CommitCount()-before != 2 {
		t.Fatalf("recovered %d messages in %d commits, want 2 in 2", len(rec), s.CommitCount()-before)
	}
	if want := []string{"a/msg-2@2/done", "b/msg-2@2/done"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("mkErr saw %v, want %v", seen, want)
	}

	got, err := s.Message(ctx, "a", "msg-2")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != synccore.MessageDone || got.Revision != 2 || len(got.Parts) != 8 {
		t.Fatalf("recovered message: state=%s rev=%d parts=%d", got.State, got.Revision, len(got.Parts))
	}
	wantStates := []string{"done", "done", string(synccore.ToolOutputError), synccore.InteractionCancelled,
		string(synccore.ToolOutputAvailable), "done", string(synccore.ActionFailed), ""}
	for i, p := range got.Parts {
		st := string(p.State)
		if p.Type == synccore.PartInteraction {
			st = p.Status
		}
		if st != wantStates[i] {
			t.Errorf("part %d (%s) state %q, want %q", i+1, p.Type, st, wantStates[i])
		}
	}
	if got.Parts[2].Output == nil {
		t.Error("interrupted tool has no output")
	}
	if e := got.Parts[7]; e.Type != synccore.PartError || e.Sequence != 8 || e.PartID != "error:restart" || e.Code != "server_restarted" {
		t.Errorf("error part = %+v", e)
	}
	if fmt.Sprint(rec[0]) != fmt.Sprint(got) {
		t.Errorf("returned message differs from the stored one:\n%+v\n%+v", rec[0], got)
	}
	b2, _ := s.Message(ctx, "b", "msg-2")
	if len(b2.Parts) != 1 || b2.Parts[0].Sequence != 1 || b2.State != synccore.MessageDone {
		t.Errorf("b/msg-2 = %+v", b2)
	}
	if b1, _ := s.Message(ctx, "b", "msg-1"); b1.Revision != 1 {
		t.Errorf("a done message was touched: %+v", b1)
	}

	// Nothing is left: a second pass recovers nothing and commits nothing.
	before = s.CommitCount()
	rec, err = s.RecoverStreaming(ctx, mkErr)
	if err != nil || len(rec) != 0 || s.CommitCount() != before {
		t.Fatalf("second pass: %d recovered, %d commits, %v", len(rec), s.CommitCount()-before, err)
	}
}
