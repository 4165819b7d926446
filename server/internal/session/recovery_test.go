package session

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// A crash leaves the agent message streaming in SQLite; the next manager
// closes it with an error part "interrupted" before serving anything.
func TestRecoveryClosesStreamingMessages(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("gated")
	e.post(sid, "go")
	e.gated.awaitBurst(t, 0)
	// The "crash": the store holds the agent message at revision 1,
	// streaming; the projection dies with the process. A second manager
	// opens the same file, as a restarted server would.
	st2, err := sqlite.Open(context.Background(), e.path, sqlite.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, err := NewManager(context.Background(), Config{Store: st2, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	h, err := st2.History(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	a := h[len(h)-1]
	if a.Role != synccore.RoleAgent || a.State != synccore.MessageDone {
		t.Fatalf("agent message %d is %s", a.Sequence, a.State)
	}
	ep := a.Parts[len(a.Parts)-1]
	if ep.Type != synccore.PartError || ep.Code != CodeInterrupted || ep.Scope != synccore.ErrorScopeTurn || !ep.Recoverable {
		t.Fatalf("error part %+v", ep)
	}
	// Let the first manager's turn end; its close is refused (done is
	// final) and logged, never a panic.
	e.gated.release <- struct{}{}
	e.gated.awaitBurst(t, 1)
	e.gated.release <- struct{}{}
	e.gated.awaitBurst(t, 2)
	e.gated.release <- struct{}{}
	e.waitIdle()
}

func TestPostMessageValidation(t *testing.T) {
	e := newEnv(t, Config{})
	sid := e.session("")
	tests := []struct {
		name  string
		req   PostMessage
		code  string
		other string // session id override
	}{
		{"no parts", PostMessage{}, synccore.CodeInvalidMessage, ""},
		{"empty text", PostMessage{Parts: []synccore.Part{{Type: synccore.PartText}}}, synccore.CodeInvalidPart, ""},
		{"user part with a state", PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: "x", State: "done"}}}, synccore.CodeInvalidPart, ""},
		{"agent part type", PostMessage{Parts: []synccore.Part{{Type: synccore.PartTool, ToolName: "x"}}}, synccore.CodeInvalidPart, ""},
		{"unknown part type", PostMessage{Parts: []synccore.Part{{Type: "video", URL: "x"}}}, synccore.CodeUnknownPartType, ""},
		{"context without a tag", PostMessage{Parts: []synccore.Part{{Type: synccore.PartContext, Context: "c"}}}, synccore.CodeInvalidPart, ""},
		{"context with a bad tag", PostMessage{Parts: []synccore.Part{{Type: synccore.PartContext, Tag: "a>b", Context: "c"}}}, synccore.CodeInvalidPart, ""},
		{"file without media type", PostMessage{Parts: []synccore.Part{{Type: synccore.PartFile, URL: "u"}}}, synccore.CodeInvalidPart, ""},
		{"data without type", PostMessage{Parts: []synccore.Part{{Type: synccore.PartData, Data: 1}}}, synccore.CodeInvalidPart, ""},
		{"bad visibility", PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: "x"}}, Visibility: "secret"}, synccore.CodeBadRequest, ""},
		{"unknown session", PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: "x"}}}, synccore.CodeNotFound, "ses_nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := sid
			if tc.other != "" {
				id = tc.other
			}
			_, err := e.m.PostMessage(e.ctx, id, tc.req)
			wantCode(t, err, tc.code)
		})
	}
	if h := e.history(sid); len(h) != 0 {
		t.Fatalf("refused messages were committed: %d", len(h))
	}

	// A valid message keeps only each type's fields and gets server ids.
	msg, err := e.m.PostMessage(e.ctx, sid, PostMessage{Parts: []synccore.Part{
		{PartID: "client-made", Type: synccore.PartText, Text: "scenario:text chars=3", Output: "junk"},
		{Type: synccore.PartContext, Tag: "reference", Context: "earlier"},
		{Type: synccore.PartData, DataType: "ui", Data: map[string]any{"k": "v"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Parts[0].PartID != "user-text:1" || msg.Parts[0].Output != nil || msg.Parts[1].PartID != "user-context:2" {
		t.Fatalf("parts %+v", msg.Parts)
	}
	if msg.Role != synccore.RoleUser || msg.State != "" || msg.Sequence != 1 || msg.Revision != 1 || msg.CreatedAt == 0 {
		t.Fatalf("message %+v", msg)
	}
	e.waitIdle()

	_, err = e.m.CreateSession(e.ctx, "no-such-model")
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = e.m.Messages(e.ctx, sid, storeQuery(-1, false))
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = e.m.Subscribe(e.ctx, "ses_nope")
	wantCode(t, err, synccore.CodeNotFound)
	_, err = e.m.Digest(e.ctx, "ses_nope", false)
	wantCode(t, err, synccore.CodeNotFound)
}
