// Package synccore is the canonical model of an agent session and the pure,
// sans-IO client state machine that keeps a view of it exact.
//
// Its API is the model (Message, Part, Frame, the events and commands),
// Client, the changes a host patches its copy with (Changes, Mirror,
// MessageList) and the typed errors. The codec, the digest and the
// WebAssembly module's byte calls are internal/wire's, for this module's
// server and hosts.
//
// It imports nothing of this repository but a leaf internal package
// (internal/corelink), touches no network, clock or randomness, and never
// iterates a map where order could leak into output: the same events always
// give the same commands, view and digest, natively, under wazero and in
// JavaScript engines.
package synccore

// Role says who wrote a message.
type Role string

const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// MessageState answers only "can parts still be appended". User messages
// have no state (they are complete when written); agent messages are
// streaming until closed, then done forever.
type MessageState string

const (
	MessageStreaming MessageState = "streaming"
	MessageDone      MessageState = "done"
)

// Visibility hides internal messages (recovery prompts, audit) from
// ordinary reads; the composer still sees them.
type Visibility string

const (
	VisibilityVisible  Visibility = "visible"
	VisibilityInternal Visibility = "internal"
)

// PartType names the kind of a part. User messages may hold text, context,
// file and data; agent messages text, reasoning, tool, interaction, file,
// data, action and error.
type PartType string

const (
	PartText        PartType = "text"
	PartReasoning   PartType = "reasoning"
	PartContext     PartType = "context"
	PartFile        PartType = "file"
	PartData        PartType = "data"
	PartTool        PartType = "tool"
	PartInteraction PartType = "interaction"
	PartAction      PartType = "action"
	PartError       PartType = "error"
)

// PartState is a part's own state (Part.State): streaming or done for text
// and reasoning, a Tool* state for tools, an Action* state for actions.
// Each constant is named as the wire names its value (docs/protocol.md §2):
// ToolAwaitingApproval is "awaiting-approval".
type PartState string

// Streaming states of text and reasoning parts.
const (
	StateStreaming PartState = "streaming"
	StateDone      PartState = "done"
)

// Tool states: the whole life of one tool call lives in one part.
const (
	ToolInputStreaming   PartState = "input-streaming"   // the model is still writing the input
	ToolInputAvailable   PartState = "input-available"   // input complete, not yet running
	ToolAwaitingApproval PartState = "awaiting-approval" // suspended on an interaction
	ToolRunning          PartState = "running"
	ToolOutputAvailable  PartState = "output-available" // finished with output
	ToolOutputError      PartState = "output-error"     // finished with an error (output holds it)
	ToolOutputDenied     PartState = "output-denied"    // the user denied the call
)

// Interaction statuses.
const (
	InteractionPending   = "pending"
	InteractionResolved  = "resolved"
	InteractionCancelled = "cancelled" // the turn ended before an answer came
)

// Action states.
const (
	ActionPending   PartState = "pending"
	ActionCompleted PartState = "completed"
	ActionFailed    PartState = "failed"
)

// Error scopes.
const (
	ErrorScopeStep    = "step"
	ErrorScopeTurn    = "turn"
	ErrorScopeSession = "session"
)

// Part is one typed piece of a message. It is a flat struct: the fields a
// type does not use stay empty and are omitted on the wire. PartID and
// Sequence (the part's 1-based position in its message) never change once
// the part exists.
//
// The msgpack tags of this package's types are the wire: tools/gencodec
// writes the codec and the digest from them (codec_gen.go). A codec:"shared"
// field's values repeat across a page, and its decoder interns them.
type Part struct {
	PartID   string   `msgpack:"part_id" json:"part_id" codec:"shared"`
	Sequence int64    `msgpack:"sequence" json:"sequence"`
	Type     PartType `msgpack:"type" json:"type"`
	// StepID is the model step that produced an agent part.
	StepID string `msgpack:"step_id,omitempty" json:"step_id,omitempty" codec:"shared"`
	// State is the part's own state: streaming/done for text and reasoning,
	// a Tool* state for tools, an Action* state for actions.
	State PartState `msgpack:"state,omitempty" json:"state,omitempty" codec:"shared"`

	// text, reasoning
	Text string `msgpack:"text,omitempty" json:"text,omitempty"`
	// context (user)
	Tag     string `msgpack:"tag,omitempty" json:"tag,omitempty"`
	Context string `msgpack:"context,omitempty" json:"context,omitempty"`
	// file
	URL       string `msgpack:"url,omitempty" json:"url,omitempty"`
	MediaType string `msgpack:"media_type,omitempty" json:"media_type,omitempty"`
	Filename  string `msgpack:"filename,omitempty" json:"filename,omitempty"`
	// data
	DataType string `msgpack:"data_type,omitempty" json:"data_type,omitempty"`
	Data     any    `msgpack:"data,omitempty" json:"data,omitempty"`
	DataID   string `msgpack:"data_id,omitempty" json:"data_id,omitempty"`
	// tool
	ToolCallID string `msgpack:"tool_call_id,omitempty" json:"tool_call_id,omitempty"`
	ToolName   string `msgpack:"tool_name,omitempty" json:"tool_name,omitempty" codec:"shared"`
	Input      any    `msgpack:"input,omitempty" json:"input,omitempty"`
	Output     any    `msgpack:"output,omitempty" json:"output,omitempty"`
	// interaction (kind and question live in Request, the answer in Response)
	InteractionID string `msgpack:"interaction_id,omitempty" json:"interaction_id,omitempty"`
	Status        string `msgpack:"status,omitempty" json:"status,omitempty"`
	Request       any    `msgpack:"request,omitempty" json:"request,omitempty"`
	Response      any    `msgpack:"response,omitempty" json:"response,omitempty"`
	// action
	ActionID   string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	ActionType string `msgpack:"action_type,omitempty" json:"action_type,omitempty"`
	Title      string `msgpack:"title,omitempty" json:"title,omitempty"`
	// error
	Scope       string `msgpack:"scope,omitempty" json:"scope,omitempty"`
	Code        string `msgpack:"code,omitempty" json:"code,omitempty"`
	Message     string `msgpack:"message,omitempty" json:"message,omitempty"`
	Recoverable bool   `msgpack:"recoverable,omitempty" json:"recoverable,omitempty"`
}

// Message is one entry of a session's single ordered list. Sequence is
// immutable and gapless per session (1, 2, 3...); Revision grows by one with
// every committed change, so a higher revision always wins.
type Message struct {
	MessageID  string       `msgpack:"message_id" json:"message_id"`
	SessionID  string       `msgpack:"session_id" json:"session_id" codec:"shared"`
	Sequence   int64        `msgpack:"sequence" json:"sequence"`
	Revision   int64        `msgpack:"revision" json:"revision"`
	Role       Role         `msgpack:"role" json:"role" codec:"shared"`
	State      MessageState `msgpack:"state,omitempty" json:"state,omitempty" codec:"shared"` // agent only
	TurnID     string       `msgpack:"turn_id,omitempty" json:"turn_id,omitempty" codec:"shared"`
	Visibility Visibility   `msgpack:"visibility" json:"visibility" codec:"shared"`
	CreatedAt  int64        `msgpack:"created_at" json:"created_at"` // Unix milliseconds, set by the server
	Parts      []Part       `msgpack:"parts" json:"parts"`
}

// Done reports whether the message can never change again: every user
// message, and every agent message that was closed.
func (m *Message) Done() bool { return m.Role == RoleUser || m.State == MessageDone }

// MessagePage is one page of messages() read from the stable snapshot,
// oldest first. Absent sequences are 0 on the wire (sequences start at 1).
type MessagePage struct {
	Items              []Message `msgpack:"items" json:"items"`
	Total              int64     `msgpack:"total" json:"total"` // every message the session created, internal ones included
	StartSequence      int64     `msgpack:"start_sequence,omitempty" json:"start_sequence,omitempty"`
	EndSequence        int64     `msgpack:"end_sequence,omitempty" json:"end_sequence,omitempty"`
	NextBeforeSequence int64     `msgpack:"next_before_sequence,omitempty" json:"next_before_sequence,omitempty"`
	HasMore            bool      `msgpack:"has_more" json:"has_more"`
}

// Page size limits of messages().
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 200
)
