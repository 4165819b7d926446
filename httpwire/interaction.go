package httpwire

import "github.com/agentsync/agentsync/synccore"

// InteractionKind is what an interaction asks (InteractionRequest.Kind).
type InteractionKind string

// Interaction kinds.
const (
	KindApproval InteractionKind = "approval" // may the tool call run? (InteractionResponse.Approved)
	KindQuestion InteractionKind = "question" // a question to the user (InteractionResponse.Answer)
)

// InteractionRequest is what an interaction part asks (its request, a map
// on the wire; RequestOf reads it).
type InteractionRequest struct {
	Kind InteractionKind `msgpack:"kind" json:"kind"`
	// ToolCallID is the tool call the interaction gates: an approval's
	// tool is "awaiting-approval" meanwhile.
	ToolCallID string `msgpack:"tool_call_id,omitempty" json:"tool_call_id,omitempty"`
	// ToolName and Input (approvals) are the call's.
	ToolName string `msgpack:"tool_name,omitempty" json:"tool_name,omitempty"`
	Input    any    `msgpack:"input,omitempty" json:"input,omitempty"`
	// Reason (approvals) says why one is asked: "tool_requires_approval"
	// or "approval_mode_ask".
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Question (questions) is the text to show.
	Question string `msgpack:"question,omitempty" json:"question,omitempty"`
	// ExpiresAt, when set (a server with an interaction timeout), is when
	// the interaction expires unanswered, RFC 3339 in UTC: it is then
	// cancelled with the response {"expired": true}, its tool ends
	// output-error, and the turn goes on.
	ExpiresAt string `msgpack:"expires_at,omitempty" json:"expires_at,omitempty"`
}

// InteractionResponse answers an interaction: Approved for an approval,
// Answer for a question (Approve, Reply). It is also how an interaction
// part holds its answer once resolved.
type InteractionResponse struct {
	Approved *bool   `msgpack:"approved,omitempty" json:"approved,omitempty"`
	Answer   *string `msgpack:"answer,omitempty" json:"answer,omitempty"`
}

// AnswerRequest is the body of POST
// /v1/sessions/{id}/interactions/{interaction_id}. The answer is the agent
// message holding the interaction.
type AnswerRequest struct {
	Response InteractionResponse `msgpack:"response" json:"response"`
}

// Approve is the response to an approval.
func Approve(approved bool) InteractionResponse { return InteractionResponse{Approved: &approved} }

// Reply is the response to a question.
func Reply(answer string) InteractionResponse { return InteractionResponse{Answer: &answer} }

// RequestOf reads an interaction part's request; false if p is not an
// interaction or its request is not a map with a kind.
func RequestOf(p *synccore.Part) (InteractionRequest, bool) {
	m, ok := p.Request.(map[string]any)
	if p.Type != synccore.PartInteraction || !ok {
		return InteractionRequest{}, false
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	r := InteractionRequest{Kind: InteractionKind(str("kind")), ToolCallID: str("tool_call_id"),
		ToolName: str("tool_name"), Input: m["input"], Reason: str("reason"), Question: str("question"), ExpiresAt: str("expires_at")}
	return r, r.Kind != ""
}

// ResponseOf reads a resolved interaction part's response; false if p is
// not an interaction or holds no response.
func ResponseOf(p *synccore.Part) (InteractionResponse, bool) {
	m, ok := p.Response.(map[string]any)
	if p.Type != synccore.PartInteraction || !ok {
		return InteractionResponse{}, false
	}
	var r InteractionResponse
	if v, ok := m["approved"].(bool); ok {
		r.Approved = &v
	}
	if v, ok := m["answer"].(string); ok {
		r.Answer = &v
	}
	return r, r.Approved != nil || r.Answer != nil
}
