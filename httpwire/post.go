package httpwire

import "github.com/agentsync/agentsync/synccore"

// PostMessageRequest is the body of POST /v1/sessions/{id}/messages: a user
// message. An Idempotency-Key header (at most 255 bytes) makes it safe to
// retry. The answer is the message as stored.
type PostMessageRequest struct {
	Parts []synccore.Part `msgpack:"parts" json:"parts"`
	// Visibility is "visible" when empty.
	Visibility synccore.Visibility `msgpack:"visibility,omitempty" json:"visibility,omitempty"`
}

// ActionType names a session operation of POST /v1/sessions/{id}/actions.
// Each constant is named as the wire names its value.
type ActionType string

// Action types.
const (
	ActionStop            ActionType = "stop"              // stop the running turn
	ActionSetModel        ActionType = "set_model"         // Value: a model name of Session.Models
	ActionSetApprovalMode ActionType = "set_approval_mode" // Value: ApprovalAsk or ApprovalAuto
	ActionRetry           ActionType = "retry"             // re-run a turn that ended with a recoverable error
)

// ActionRequest is the body of POST /v1/sessions/{id}/actions. The answer
// is the message holding the action part.
type ActionRequest struct {
	ActionType ActionType `msgpack:"action_type" json:"action_type"`
	Value      string     `msgpack:"value,omitempty" json:"value,omitempty"`
}
