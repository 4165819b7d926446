package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

func testCommitNewAndUpdate(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")

	before := s.CommitCount()
	a := AgentMessage("s", 2, TextPart(1, synccore.StateStreaming, "Hel"))
	MustCommit(t, s, "s", UserMessage("s", 1, "hi"), a)
	if got := s.CommitCount() - before; got != 1 {
		t.Fatalf("one batch cost %d commits", got)
	}

	// revision 2: the text part grows, a tool part is added.
	a.Revision = 2
	a.Parts = []synccore.Part{
		TextPart(1, synccore.StateDone, "Hello"),
		{PartID: "tool:c1", Sequence: 2, Type: synccore.PartTool, ToolCallID: "c1", ToolName: "search",
			State: synccore.ToolRunning, Input: map[string]any{"q": "go"}},
	}
	MustCommit(t, s, "s", a)

	// revision 3 gives only the tool part: the text part must be kept.
	a.Revision = 3
	a.State = synccore.MessageDone
	a.Parts = []synccore.Part{{PartID: "tool:c1", Sequence: 2, Type: synccore.PartTool, ToolCallID: "c1",
		ToolName: "search", State: synccore.ToolOutputAvailable, Input: map[string]any{"q": "go"}, Output: "found"}}
	MustCommit(t, s, "s", a)

	got, err := s.Message(ctx, "s", "msg-2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 3 || got.State != synccore.MessageDone || len(got.Parts) != 2 {
		t.Fatalf("message = %+v", got)
	}
	if got.Parts[0].Text != "Hello" || got.Parts[0].State != synccore.StateDone {
		t.Errorf("text part = %+v", got.Parts[0])
	}
	tool := got.Parts[1]
	if tool.State != synccore.ToolOutputAvailable || tool.Output != "found" || !reflect.DeepEqual(tool.Input, map[string]any{"q": "go"}) {
		t.Errorf("tool part = %+v", tool)
	}
	if _, err := s.Message(ctx, "s", "nope"); err == nil {
		t.Fatal("Message(nope) found something")
	}
	_, err = s.Message(ctx, "s", "nope")
	WantCode(t, err, synccore.CodeNotFound)
	_, err = s.Message(ctx, "nosession", "msg-1")
	WantCode(t, err, synccore.CodeNotFound)
}

func testCommitRoundTripsEveryField(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	m := AgentMessage("s", 1,
		synccore.Part{PartID: "r:1", Sequence: 1, Type: synccore.PartReasoning, StepID: "st", State: "done", Text: "think"},
		synccore.Part{PartID: "f:2", Sequence: 2, Type: synccore.PartFile, URL: "https://x/y.png", MediaType: "image/png", Filename: "y.png"},
		synccore.Part{PartID: "d:3", Sequence: 3, Type: synccore.PartData, DataType: "chart", DataID: "d1", Data: map[string]any{"n": int8(3)}},
		synccore.Part{PartID: "i:4", Sequence: 4, Type: synccore.PartInteraction, InteractionID: "i1", Status: "pending",
			Request: map[string]any{"kind": "question"}},
		synccore.Part{PartID: "a:5", Sequence: 5, Type: synccore.PartAction, ActionID: "a1", ActionType: "set_model", State: "completed", Title: "Model"},
		synccore.Part{PartID: "e:6", Sequence: 6, Type: synccore.PartError, Scope: "turn", Code: "boom", Message: "failed", Recoverable: true},
	)
	m.TurnID = "turn-x"
	m.Visibility = synccore.VisibilityInternal
	MustCommit(t, s, "s", m)
	got, err := s.Message(ctx, "s", m.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}
}

func testCommitRules(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	MustCommit(t, s, "s", UserMessage("s", 1, "hi"), AgentMessage("s", 2, TextPart(1, "streaming", "x")))

	a := AgentMessage("s", 2, TextPart(1, "streaming", "xy"))
	cases := []struct {
		name string
		code string
		msgs []synccore.Message
	}{
		{"unknown session", synccore.CodeNotFound, nil},
		{"new message skips a sequence", synccore.CodeConflict, []synccore.Message{UserMessage("s", 4, "x")}},
		{"new message reuses a sequence", synccore.CodeConflict, []synccore.Message{func() synccore.Message {
			m := UserMessage("s", 2, "x")
			m.MessageID = "other"
			return m
		}()}},
		{"new message with revision 2", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message {
			m := UserMessage("s", 3, "x")
			m.Revision = 2
			return m
		}()}},
		{"stale revision", synccore.CodeRevisionBackward, []synccore.Message{a}},
		{"skipped revision", synccore.CodeConflict, []synccore.Message{func() synccore.Message { m := a; m.Revision = 3; return m }()}},
		{"user message is final", synccore.CodeDoneIsFinal, []synccore.Message{func() synccore.Message { m := UserMessage("s", 1, "edit"); m.Revision = 2; return m }()}},
		{"message sequence changed", synccore.CodeSequenceChanged, []synccore.Message{func() synccore.Message { m := a; m.Revision = 2; m.Sequence = 3; return m }()}},
		{"part sequence changed", synccore.CodeSequenceChanged, []synccore.Message{func() synccore.Message {
			m := a
			m.Revision = 2
			m.Parts = []synccore.Part{TextPart(1, "streaming", "x")}
			m.Parts[0].Sequence = 2
			return m
		}()}},
		{"new part takes an old sequence", synccore.CodeSequenceChanged, []synccore.Message{func() synccore.Message {
			m := a
			m.Revision = 2
			m.Parts = []synccore.Part{{PartID: "other", Sequence: 1, Type: synccore.PartText}}
			return m
		}()}},
		{"part gap", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message {
			m := a
			m.Revision = 2
			m.Parts = []synccore.Part{TextPart(3, "streaming", "x")}
			return m
		}()}},
		{"unknown part type", synccore.CodeUnknownPartType, []synccore.Message{func() synccore.Message {
			m := UserMessage("s", 3, "x")
			m.Parts[0].Type = "video"
			return m
		}()}},
		{"part without id", synccore.CodeInvalidPart, []synccore.Message{func() synccore.Message {
			m := UserMessage("s", 3, "x")
			m.Parts[0].PartID = ""
			return m
		}()}},
		{"duplicate part id", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message {
			m := UserMessage("s", 3, "x")
			m.Parts = append(m.Parts, m.Parts[0])
			m.Parts[1].Sequence = 2
			return m
		}()}},
		{"user message with state", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message {
			m := UserMessage("s", 3, "x")
			m.State = synccore.MessageDone
			return m
		}()}},
		{"bad role", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message { m := UserMessage("s", 3, "x"); m.Role = "system"; return m }()}},
		{"bad visibility", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message { m := UserMessage("s", 3, "x"); m.Visibility = ""; return m }()}},
		{"other session's message", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message { m := UserMessage("t", 3, "x"); return m }()}},
		{"visibility changed", synccore.CodeInvalidMessage, []synccore.Message{func() synccore.Message {
			m := a
			m.Revision = 2
			m.Visibility = synccore.VisibilityInternal
			return m
		}()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sid := "s"
			if tc.msgs == nil {
				sid = "missing"
				tc.msgs = []synccore.Message{UserMessage("missing", 1, "x")}
			}
			before := s.CommitCount()
			WantCode(t, s.Commit(ctx, sid, tc.msgs), tc.code)
			if s.CommitCount() != before {
				t.Error("a rejected batch was counted as a commit")
			}
		})
	}

	// Done is final for agent messages too.
	a.Revision = 2
	a.State = synccore.MessageDone
	MustCommit(t, s, "s", a)
	a.Revision = 3
	WantCode(t, s.Commit(ctx, "s", []synccore.Message{a}), synccore.CodeDoneIsFinal)
}

func testCommitBatchIsAtomic(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t, "main")
	NewSession(t, s, "s")
	MustCommit(t, s, "s", AgentMessage("s", 1, TextPart(1, "streaming", "a")))

	good := AgentMessage("s", 1, TextPart(1, "streaming", "ab"))
	good.Revision = 2
	bad := UserMessage("s", 4, "skips sequence 3")
	err := s.Commit(ctx, "s", []synccore.Message{good, UserMessage("s", 2, "ok"), bad})
	WantCode(t, err, synccore.CodeConflict)

	p := page(t, s, "s", store.PageQuery{Limit: 50})
	if p.Total != 1 || len(p.Items) != 1 || p.Items[0].Revision != 1 || p.Items[0].Parts[0].Text != "a" {
		t.Fatalf("a failed batch left traces: %+v", p)
	}
	sess, _ := s.Session(ctx, "s")
	if sess.HeadSequence != 1 {
		t.Fatalf("head = %d after a failed batch", sess.HeadSequence)
	}
	// The same batch, fixed, goes through in one commit.
	before := s.CommitCount()
	MustCommit(t, s, "s", good, UserMessage("s", 2, "ok"), UserMessage("s", 3, "fine"))
	if s.CommitCount()-before != 1 {
		t.Fatal("batch was not one commit")
	}
}

func testCommitSameMessageTwiceInBatch(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	a1 := AgentMessage("s", 1, TextPart(1, "streaming", "a"))
	a2 := AgentMessage("s", 1, TextPart(1, "done", "ab"))
	a2.Revision, a2.State = 2, synccore.MessageDone
	MustCommit(t, s, "s", a1, a2)
	m, err := s.Message(context.Background(), "s", "msg-1")
	if err != nil || m.Revision != 2 || m.Parts[0].Text != "ab" {
		t.Fatalf("got %+v, %v", m, err)
	}
}

func testCommitFillsCreatedAt(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	msgs := []synccore.Message{UserMessage("s", 1, "x")}
	msgs[0].CreatedAt = 0
	MustCommit(t, s, "s", msgs...)
	if msgs[0].CreatedAt == 0 {
		t.Fatal("CreatedAt not filled in")
	}
	m, _ := s.Message(context.Background(), "s", "msg-1")
	if m.CreatedAt != msgs[0].CreatedAt {
		t.Fatalf("stored created_at %d, caller has %d", m.CreatedAt, msgs[0].CreatedAt)
	}

	// An update keeps the stored created_at, whatever the caller sent.
	a := AgentMessage("s", 2)
	MustCommit(t, s, "s", a)
	a.Revision, a.CreatedAt = 2, 0
	upd := []synccore.Message{a}
	MustCommit(t, s, "s", upd...)
	if upd[0].CreatedAt != 1_700_000_000_002 {
		t.Fatalf("update changed created_at to %d", upd[0].CreatedAt)
	}
	if got, _ := s.Message(context.Background(), "s", "msg-2"); got.CreatedAt != 1_700_000_000_002 {
		t.Fatalf("stored created_at changed to %d", got.CreatedAt)
	}
}

func testCommitCancelledContext(t *testing.T, open Opener) {
	s := open(t, "main")
	NewSession(t, s, "s")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Commit(ctx, "s", []synccore.Message{UserMessage("s", 1, "x")}); err == nil {
		t.Fatal("commit with a cancelled context succeeded")
	}
	// The writer is usable afterwards.
	MustCommit(t, s, "s", UserMessage("s", 1, "x"))
}
