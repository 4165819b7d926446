package multinode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// uiChunks reads a UI message stream (the AI SDK's SSE): its JSON chunks.
func uiChunks(t *testing.T, r reply) []map[string]any {
	t.Helper()
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("chat: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, c)
	}
	return out
}

// chatBody is DefaultChatTransport's body with one last message.
func chatBody(sid string, last map[string]any) string {
	b, _ := json.Marshal(map[string]any{"id": sid, "messages": []any{last}})
	return string(b)
}

// The AI SDK's POST /v1/chat on nodes that do not serve the session: the
// post and the approval's answer run on the node that serves it (its lease
// unchanged), and the reply streams from the receiving node, following the
// owner's frames over NATS: the streamed text is the committed text.
func TestChatOnAnotherNodeRunsOnTheOwner(t *testing.T) {
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, nil)
	b := startForwardingNode(t, db, "node-b", ns, nil)
	c := startForwardingNode(t, db, "node-c", ns, nil)
	sid := exchangeOn(t, a.node)
	holder, epoch := lease(t, db, sid)

	user := map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "scenario:text chars=3000 delta=5"}}}
	var streamed strings.Builder
	finished := false
	for _, ch := range uiChunks(t, b.send("POST", "/v1/chat", chatBody(sid, user), nil)) {
		switch ch["type"] {
		case "text-delta":
			streamed.WriteString(ch["delta"].(string))
		case "finish":
			finished = true
		}
	}
	h := a.history(sid)
	last := h[len(h)-1]
	if !finished || last.Role != synccore.RoleAgent || last.State != synccore.MessageDone || streamed.String() != last.Parts[0].Text {
		t.Fatalf("streamed %d bytes (finished %v); committed %s", streamed.Len(), finished, summary(h))
	}
	if h[len(h)-2].Parts[0].Text != "scenario:text chars=3000 delta=5" {
		t.Fatalf("the user message: %s", summary(h))
	}

	// An approval: the stream on c stops at the request; the decision,
	// sent on c too, reaches a's pending interaction and the reply goes on.
	user["id"], user["parts"] = "u2", []any{map[string]any{"type": "text", "text": "scenario:approval to=ops@example.com"}}
	var approvalID, toolCallID, messageID string
	for _, ch := range uiChunks(t, c.send("POST", "/v1/chat", chatBody(sid, user), nil)) {
		switch ch["type"] {
		case "start":
			messageID, _ = ch["messageId"].(string)
		case "tool-approval-request":
			approvalID, toolCallID = ch["approvalId"].(string), ch["toolCallId"].(string)
		}
	}
	if approvalID == "" || messageID == "" {
		t.Fatal("no approval request streamed on c")
	}
	assistant := map[string]any{"id": messageID, "role": "assistant", "parts": []any{map[string]any{
		"type": "tool-send_email", "toolCallId": toolCallID, "state": "approval-responded",
		"approval": map[string]any{"id": approvalID, "approved": true}}}}
	finished = false
	for _, ch := range uiChunks(t, c.send("POST", "/v1/chat", chatBody(sid, assistant), nil)) {
		finished = finished || ch["type"] == "finish"
	}
	h = a.history(sid)
	if last := h[len(h)-1]; !finished || last.State != synccore.MessageDone || last.MessageID != messageID {
		t.Fatalf("after the approval on c (finished %v): %s", finished, summary(h))
	}
	if h2, e2 := lease(t, db, sid); h2 != holder || e2 != epoch {
		t.Fatalf("lease moved: %s@%d, was %s@%d", h2, e2, holder, epoch)
	}

	// A refusal of the owner reaches the client as the owner's typed error.
	r := b.send("POST", "/v1/chat", chatBody(sid, map[string]any{"id": messageID, "role": "assistant", "parts": []any{map[string]any{
		"type": "tool-send_email", "toolCallId": toolCallID, "state": "approval-responded",
		"approval": map[string]any{"id": "int_nope", "approved": true}}}}), nil)
	var refusal synccore.Error
	if err := json.Unmarshal(r.body, &refusal); err != nil || r.status != http.StatusNotFound && r.status != http.StatusConflict {
		t.Fatalf("an answer to no interaction, on b: %d %s", r.status, r.body)
	}
	if refusal.Code == "" {
		t.Fatalf("untyped refusal: %s", r.body)
	}
}
