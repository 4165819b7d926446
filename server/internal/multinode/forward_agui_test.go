package multinode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// aguiBody is a RunAgentInput with the given messages and resume.
func aguiBody(sid, run string, messages []any, resume []any) string {
	in := map[string]any{"threadId": sid, "runId": run, "messages": messages, "tools": []any{}, "context": []any{},
		"state": map[string]any{}, "forwardedProps": map[string]any{}}
	if resume != nil {
		in["resume"] = resume
	}
	b, _ := json.Marshal(in)
	return string(b)
}

// The AG-UI endpoint on nodes that do not serve the session: the post and
// the resume's answer run on the owner (its lease unchanged), the events
// stream from the receiving node; the streamed text is the committed text.
func TestAGUIOnAnotherNodeRunsOnTheOwner(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := exchangeOn(t, a.node)
	holder, epoch := lease(t, db, sid)

	user := map[string]any{"id": "client-u1", "role": "user", "content": "scenario:approval to=ops@example.com"}
	var interrupt map[string]any
	var text strings.Builder
	for _, ev := range uiChunks(t, b.send("POST", "/v1/agui", aguiBody(sid, "run-1", []any{user}, nil), nil)) {
		switch ev["type"] {
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(ev["delta"].(string))
		case "RUN_FINISHED":
			out, _ := ev["outcome"].(map[string]any)
			if ins, _ := out["interrupts"].([]any); len(ins) == 1 {
				interrupt = ins[0].(map[string]any)
			}
		}
	}
	if interrupt == nil || interrupt["reason"] != "approval" {
		t.Fatalf("no approval interrupt streamed on b (text %q)", text.String())
	}
	h := a.history(sid)
	if u := h[len(h)-2]; u.Role != synccore.RoleUser || u.Parts[0].Text != "scenario:approval to=ops@example.com" {
		t.Fatalf("the user message: %s", summary(h))
	}

	resume := []any{map[string]any{"interruptId": interrupt["id"], "status": "resolved", "payload": map[string]any{"approved": true}}}
	finished := false
	text.Reset()
	for _, ev := range uiChunks(t, c.send("POST", "/v1/agui", aguiBody(sid, "run-2", []any{user}, resume), nil)) {
		switch ev["type"] {
		case "MESSAGES_SNAPSHOT":
			// The client's text of the reply: what the snapshot holds, then
			// the deltas.
			for _, m := range ev["messages"].([]any) {
				m := m.(map[string]any)
				if id, _ := m["id"].(string); m["role"] == "assistant" && strings.HasPrefix(id, interrupt["metadata"].(map[string]any)["agentsync"].(map[string]any)["message_id"].(string)) {
					s, _ := m["content"].(string)
					text.WriteString(s)
				}
			}
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(ev["delta"].(string))
		case "RUN_FINISHED":
			out, _ := ev["outcome"].(map[string]any)
			finished = out["type"] == "success"
		}
	}
	h = a.history(sid)
	last := h[len(h)-1]
	var committed strings.Builder
	for _, p := range last.Parts {
		if p.Type == synccore.PartText {
			committed.WriteString(p.Text)
		}
	}
	if !finished || last.State != synccore.MessageDone || text.String() != committed.String() ||
		!strings.Contains(committed.String(), "Done: the email was sent") {
		t.Fatalf("after the resume on c (finished %v): streamed %q, committed %q", finished, text.String(), committed.String())
	}
	if h2, e2 := lease(t, db, sid); h2 != holder || e2 != epoch {
		t.Fatalf("lease moved: %s@%d, was %s@%d", h2, e2, holder, epoch)
	}
	// The same first run sent again (a retry) posts nothing new.
	before := len(a.history(sid))
	uiChunks(t, b.send("POST", "/v1/agui", aguiBody(sid, "run-3", []any{user}, nil), nil))
	if after := len(a.history(sid)); after != before {
		t.Fatalf("the retried run posted again: %d messages, were %d", after, before)
	}
}
