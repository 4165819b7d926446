package session

import (
	"log/slog"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Config configures a Manager.
type Config struct {
	Store store.Store
	// OnTreeChanged, if set, is told when a position of a conversation
	// gained or lost an alternative: a fork's first own message was
	// created, or a fork was deleted (the signals of a subscription). It
	// must not block.
	OnTreeChanged func(root string, sequence int64)
	// OnSessionChanged, if set, is told when a session of owner was
	// created, renamed, forked or deleted, or when a turn started
	// (running true) or ended (false) in it: the live session lists
	// (docs/protocol.md, "Session list"). It must not block.
	OnSessionChanged func(owner, sessionID string, deleted bool, running *bool)
	Models           model.Registry // nil = scripted.Registry() (the scripted model only)
	// DefaultModel is the model of sessions created without one; "" =
	// model.DefaultName.
	DefaultModel string
	Tools        []model.Tool // nil = scripted.DemoTools()
	// Blobs, if set, is where the sessions' files are (docs/files.md):
	// the composer reads the user messages' files from it for the model
	// (composer.Files, within FileBudget), and the write_file tool
	// (server/internal/filetool, files of at most WriteFileMax bytes; 0:
	// its default, < 0: no such tool) joins Tools unless a tool of that
	// name is there.
	Blobs        blob.Store
	FileBudget   int64 // file bytes per model request; 0 = composer.DefaultFileBudget, < 0: none
	WriteFileMax int64
	Logger       *slog.Logger
	QueueLimit   int // per-subscriber frame queue bound, default 4096
	QueueBytes   int // per-subscriber bound on queued delta text, default 16 MiB
	FoldBytes    int // a lagging subscriber's deltas fold up to this (default 64 KiB); -1: never
	// Pacer paces the deliveries of every session's hub (fanout.Pacer,
	// one per node); nil delivers each batch at once.
	Pacer *fanout.Pacer
	Speed model.Speed  // pacing of streams and tools; zero = as fast as possible
	Now   func() int64 // Unix ms, default time.Now
	// ResumeInterrupted retries, at start, the turns a crash interrupted
	// (as a client's "retry" action would).
	ResumeInterrupted bool
	// ToolTimeout bounds one tool run (default DefaultToolTimeout): a tool
	// that hangs becomes output-error, the turn goes on.
	ToolTimeout time.Duration
	// MaxToolOutput bounds a tool's output, in bytes of JSON (default
	// DefaultMaxToolOutput); a larger one is cut (see boundOutput).
	MaxToolOutput int
	// InteractionTimeout, if set, is how long an interaction (an approval,
	// a question) waits for its answer: its request carries expires_at
	// (RFC 3339, UTC), and past it the interaction is cancelled, its tool
	// ends output-error and the turn goes on. 0: interactions never expire.
	InteractionTimeout time.Duration
	// MaxSteps bounds the model steps of one turn (a runaway tool loop
	// fails the turn); default 32.
	MaxSteps int
	// IdleTimeout, if set, unloads a session from memory once it has had
	// no request, turn or subscriber for that long (evict.go); the next
	// use loads it from the store again. 0 keeps sessions loaded.
	IdleTimeout time.Duration
	// MaxLoaded, if set, bounds the sessions in memory: past it the least
	// recently used idle ones are unloaded. Busy sessions (a running turn,
	// a subscriber, a request) are never unloaded, so the bound can be
	// passed while they are more than MaxLoaded.
	MaxLoaded int
	// Cluster, if set, makes this manager one node of several sharing
	// Store (PostgreSQL): it serves a session only while it holds its
	// lease (cluster.go), and recovers a dead node's open messages when it
	// takes their sessions over rather than all at start. ResumeInterrupted
	// does not apply.
	Cluster *ClusterConfig
	// Observer receives the manager's events (commits, turns, model
	// steps, resyncs, leases); nil observes nothing.
	Observer obs.Observer
	// Tracer, if set, traces turns, model steps and tool calls; nil
	// traces nothing.
	Tracer obs.Tracer
	// StoreName labels the commits the Observer sees ("sqlite",
	// "postgres"); "" is Store's package name.
	StoreName string
}

// PostMessage is the body of a user message.
type PostMessage struct {
	Parts      []synccore.Part     `json:"parts" msgpack:"parts"`
	Visibility synccore.Visibility `json:"visibility,omitempty" msgpack:"visibility,omitempty"`
	// Delivery of a message sent while a turn runs: DeliverySteer (empty),
	// DeliveryQueue or DeliveryInterrupt (httpwire.Delivery).
	Delivery string `json:"delivery,omitempty" msgpack:"delivery,omitempty"`
	// IdempotencyKey, from the request's Idempotency-Key header, makes a
	// retried post safe: a post whose key the session already has returns
	// the message the first one committed (idempotent.go).
	IdempotencyKey string `json:"-" msgpack:"-"`
}

// Action is a session operation.
type Action struct {
	ActionType string `json:"action_type" msgpack:"action_type"` // one of ActionTypes()
	Value      string `json:"value,omitempty" msgpack:"value,omitempty"`
}

// Action types and approval modes.
const (
	ActionStop            = "stop"
	ActionSetModel        = "set_model"
	ActionSetApprovalMode = "set_approval_mode"
	// ActionRetry runs a turn that ended with a recoverable error again.
	ActionRetry = "retry"

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

// Tool bounds.
const (
	DefaultToolTimeout   = 60 * time.Second
	DefaultMaxToolOutput = 32 << 10
)
