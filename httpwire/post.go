package httpwire

import "github.com/agentsync/agentsync/synccore"

// PostMessageRequest is the body of POST /v1/sessions/{id}/messages: a user
// message. An Idempotency-Key header (at most 255 bytes) makes it safe to
// retry. The answer is the message as stored.
type PostMessageRequest struct {
	Parts []synccore.Part `msgpack:"parts" json:"parts"`
	// Visibility is "visible" when empty.
	Visibility synccore.Visibility `msgpack:"visibility,omitempty" json:"visibility,omitempty"`
	// Delivery says what a message sent while a turn runs does (ignored
	// when none runs): DeliverySteer (empty: the default) joins the running
	// turn, whose next step reads it; DeliveryQueue answers it in a turn
	// of its own once the running one ends; DeliveryInterrupt stops the
	// running turn and then answers it.
	Delivery Delivery `msgpack:"delivery,omitempty" json:"delivery,omitempty"`
}

// Delivery is how a message sent while a turn runs is answered
// (PostMessageRequest.Delivery).
type Delivery string

// Deliveries.
const (
	DeliverySteer     Delivery = "steer"     // the running turn reads it at its next step
	DeliveryQueue     Delivery = "queue"     // the next turn answers it, after the running one
	DeliveryInterrupt Delivery = "interrupt" // the running turn stops; a new one answers it
)

// DataTypeDelivery is the data_type of the part the server adds to a
// message queued or interrupting (Delivery queue or interrupt, sent while
// a turn ran): {"delivery": "queue" | "interrupt"}. Its turn_id is the
// turn that will answer it: until a message of that turn follows, the
// message is waiting, and every device shows it as queued.
const DataTypeDelivery = "agentsync.delivery"

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
