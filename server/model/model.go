// Package model is the small interface between the session engine and a
// language model: the Provider, the Request it streams and the Events it
// emits, the Tools a model may call. It imports no SDK. The providers live
// in their own packages, so an app pays only for those it imports:
// server/model/openai, server/model/anthropic, and server/model/scripted
// (the deterministic model the reference server ships, so that every kind
// of turn can be played without an LLM).
package model

import (
	"context"
	"time"
)

// Roles of the composed model input.
const (
	RoleSystem    = "system" // instructions: a summary of older turns, say
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Content types of the composed model input.
const (
	ContentText       = "text"
	ContentReasoning  = "reasoning"
	ContentFile       = "file"
	ContentToolCall   = "tool_call"
	ContentToolResult = "tool_result"
)

// InputMessage is one entry of the model's input, in the shape most chat
// APIs take: user turns, assistant turns (text, reasoning, tool calls) and
// tool results.
type InputMessage struct {
	Role    string         `json:"role"`    // one of the Role* constants
	Content []InputContent `json:"content"` // in order
	// Internal marks a user entry the server or an app added that the user
	// did not write (an internal message: a retry's recovery prompt). A
	// provider sends it as any other; the scripted model skips it to find
	// what the user asked when it plays another version of an answer.
	Internal bool `json:"internal,omitempty"`
}

// InputContent is one piece of an InputMessage; fields a type does not use
// stay empty.
type InputContent struct {
	Type string `json:"type"`           // one of the Content* constants
	Text string `json:"text,omitempty"` // text, reasoning
	// file; Filename and MediaType also mark a text entry that stands for
	// a file (its text, or the note that it was left out)
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Filename  string `json:"filename,omitempty"`
	// Data, if set, is the file's bytes, which the composer read from the
	// blob store (or a data: URL) within its file budget: a provider sends
	// them (an image or a PDF, base64) instead of URL, which may be a path
	// only this server's authorized file route serves. Without Data a
	// provider sends URL only when it is http(s) or data:, else a line
	// naming the file.
	Data []byte `json:"-"`
	// tool_call and tool_result
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	Input      any    `json:"input,omitempty"`
	Output     any    `json:"output,omitempty"`
	// tool_result: the tool's final state (output-available, output-error,
	// output-denied); IsError is true for the latter two.
	ToolState string `json:"tool_state,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// ToolSpec describes a tool to the model and to the engine.
type ToolSpec struct {
	Name        string `json:"name"`        // unique among a server's tools
	Description string `json:"description"` // what the model reads to choose it
	// NeedsApproval: the user approves every call, whatever the session's
	// approval mode.
	NeedsApproval bool `json:"needs_approval,omitempty"`
	// InputSchema is the JSON schema of the tool's input (an object
	// schema); nil means any object.
	InputSchema map[string]any `json:"input_schema,omitempty"`
	// AsksUser: the tool's output is the user's answer to a question (the
	// input's "question"); the engine runs it as a question interaction.
	AsksUser bool `json:"asks_user,omitempty"`
}

// Request is one model step.
type Request struct {
	SessionID string         // the agentsync session, for logs and provider-side caching
	TurnID    string         // the turn this step belongs to
	StepID    string         // the step_id its parts will carry
	Step      int            // 1-based within the turn
	Model     string         // the registry name the session chose
	Messages  []InputMessage // the context the composer built, oldest first
	// Purpose is "" for a turn's step, PurposeSummary when the composer
	// asks for a summary of older turns (no tools, text only).
	Purpose string
	Tools   []ToolSpec // the tools the model may call this step
	// Attempt is 0 for a turn's first answer and n for its n-th other
	// version (a regeneration: a fork that runs the turn again,
	// docs/protocol.md §3.2; or a retry, after the recovery prompt). A
	// deterministic model varies its answer by it; a real one may ignore
	// it.
	Attempt int
}

// PurposeSummary marks a request for a summary of older turns.
const PurposeSummary = "summary"

// Event types a provider emits during a step, in stream order.
const (
	EvTextStart      = "text-start"
	EvTextDelta      = "text-delta"
	EvTextEnd        = "text-end"
	EvReasoningStart = "reasoning-start"
	EvReasoningDelta = "reasoning-delta"
	EvReasoningEnd   = "reasoning-end"
	EvToolInputStart = "tool-input-start" // a tool call begins (its input is still being written)
	EvToolInputDelta = "tool-input-delta" // more of a tool call's input JSON (Delta)
	EvToolCall       = "tool-call"        // a complete tool call: id, name, input
	EvData           = "data"
	EvFile           = "file"
	EvFinish         = "finish"
)

// DataUsage is the data_type of the part that holds a step's token usage:
// {"model", "input_tokens", "output_tokens", ...}, one per step of a real
// provider, so clients can show what a turn cost.
const DataUsage = "usage"

// Finish reasons.
const (
	FinishStop      = "stop"       // the turn's answer is complete
	FinishToolCalls = "tool-calls" // run the tools, then another step
)

// Event is one thing a provider streamed. BlockID ties the deltas of one
// text or reasoning block to its start and end.
type Event struct {
	Type    string // one of the Ev* constants
	BlockID string // text and reasoning events: which block
	Delta   string // text-delta, reasoning-delta: the text appended
	// tool-input-start, tool-call
	ToolCallID string
	ToolName   string
	Input      any
	// data
	DataType string
	Data     any
	DataID   string
	// file
	URL, MediaType, Filename string
	// finish
	FinishReason string
}

// Provider streams one model step. It calls emit for every event in order
// and returns when the step is over; emit returns an error when the engine
// wants the step to stop (then Stream returns that error). A returned error
// fails the turn.
type Provider interface {
	// Stream runs one step: it calls emit for every event in order, the
	// last one a finish, and returns when the step is over. An error from
	// emit (the turn was stopped) ends the stream with that error; a
	// provider's own failure is best an *Error, so the engine knows
	// whether to retry.
	Stream(ctx context.Context, req Request, emit func(Event) error) error
}

// Speed paces streaming for demos; the zero value runs as fast as possible.
type Speed struct {
	// Delta is the time between two deltas of a step: each is due Delta
	// after the one before was due, so a busy engine that applied one late
	// catches up, as a provider's stream does (session.paceDelta).
	Delta time.Duration
	Tool  time.Duration // time a tool "runs"
}

// Paced is the demo pacing: d per delta, and 20 deltas' worth per tool.
func Paced(d time.Duration) Speed { return Speed{Delta: d, Tool: 20 * d} }
