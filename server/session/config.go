package session

import (
	"log/slog"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Config configures a Manager.
type Config struct {
	Store      *store.Store
	Models     model.Registry // nil = model.Default() (the scripted model only)
	Tools      []model.Tool   // nil = model.DemoTools()
	Logger     *slog.Logger
	QueueLimit int          // per-subscriber frame queue bound, default 4096
	Speed      model.Speed  // pacing of streams and tools; zero = as fast as possible
	Now        func() int64 // Unix ms, default time.Now
	// MaxSteps bounds the model steps of one turn (a runaway tool loop
	// fails the turn); default 32.
	MaxSteps int
}

// PostMessage is the body of a user message.
type PostMessage struct {
	Parts      []synccore.Part     `json:"parts" msgpack:"parts"`
	Visibility synccore.Visibility `json:"visibility,omitempty" msgpack:"visibility,omitempty"`
}

// Action is a session operation.
type Action struct {
	ActionType string `json:"action_type" msgpack:"action_type"` // "stop" | "set_model" | "set_approval_mode"
	Value      string `json:"value,omitempty" msgpack:"value,omitempty"`
}

// Action types and approval modes.
const (
	ActionStop            = "stop"
	ActionSetModel        = "set_model"
	ActionSetApprovalMode = "set_approval_mode"

	ApprovalAsk  = "ask"  // every tool call waits for the user's approval
	ApprovalAuto = "auto" // only tools that always need approval wait

	// Why an approval is asked (its request's "reason"): the tool always
	// needs one whatever the mode (send_email), or the session's mode is ask.
	ReasonToolRequiresApproval = "tool_requires_approval"
	ReasonApprovalModeAsk      = "approval_mode_ask"
)

func approvalReason(toolNeedsApproval bool) string {
	if toolNeedsApproval {
		return ReasonToolRequiresApproval
	}
	return ReasonApprovalModeAsk
}

// Error part codes the engine writes.
const (
	CodeInterrupted = "interrupted" // the server died mid-turn (written by recovery)
	CodeShutdown    = "shutdown"    // the server shut down mid-turn
	CodeStopped     = "stopped"     // the user stopped the turn
	CodeModelError  = "model_error" // the model failed
	// CodeTooManySteps: the turn passed Config.MaxSteps model steps.
	CodeTooManySteps = "too_many_steps"
)
