package httpwire

// Session is one session as the server shows it: in GET /v1/sessions, and
// as the answer of POST /v1/sessions and PATCH /v1/sessions/{id}.
type Session struct {
	SessionID string `msgpack:"session_id" json:"session_id"`
	// Model is the name of the session's model.
	Model string `msgpack:"model" json:"model"`
	// ApprovalMode is "ask" or "auto" (ApprovalAsk, ApprovalAuto).
	ApprovalMode ApprovalMode `msgpack:"approval_mode,omitempty" json:"approval_mode,omitempty"`
	// CreatedAt is in Unix milliseconds.
	CreatedAt int64 `msgpack:"created_at" json:"created_at"`
	// UpdatedAt is in Unix milliseconds.
	UpdatedAt int64 `msgpack:"updated_at,omitempty" json:"updated_at,omitempty"`
	// HeadSequence is the sequence of the session's newest message.
	HeadSequence int64 `msgpack:"head_sequence" json:"head_sequence"`
	// Title is "" until the first visible user message is committed, then
	// that message's text, shortened; RenameSession sets it.
	Title string `msgpack:"title" json:"title"`
	// Actions are the action types the server accepts for the session (a
	// UI shows Retry only when it holds ActionRetry).
	Actions []ActionType `msgpack:"actions" json:"actions"`
	// Models are the model names ActionSetModel takes, the default first.
	Models []string `msgpack:"models" json:"models"`
	// RootSessionID is the session's conversation: the root of its tree
	// of forks (a root's own id). A sidebar groups sessions by it.
	RootSessionID string `msgpack:"root_session_id,omitempty" json:"root_session_id,omitempty"`
	// Running is true while a turn runs in the session, as the serving
	// node heard (GET /v1/sessions and the live session list).
	Running bool `msgpack:"running,omitempty" json:"running,omitempty"`
	// ParentSessionID is the session a fork was made from (it may have
	// been deleted since); empty for a root.
	ParentSessionID string `msgpack:"parent_session_id,omitempty" json:"parent_session_id,omitempty"`
	// ForkSequence is the sequence a fork was made before: its messages
	// 1..ForkSequence-1 are its parent's. 0 for a root.
	ForkSequence int64 `msgpack:"fork_sequence,omitempty" json:"fork_sequence,omitempty"`
}

// SessionList is the answer of GET /v1/sessions: newest first.
type SessionList struct {
	Items []Session `msgpack:"items" json:"items"`
}

// CreateSessionRequest is the (optional) body of POST /v1/sessions.
type CreateSessionRequest struct {
	// Model names the session's model; empty is the server's default.
	Model string `msgpack:"model,omitempty" json:"model,omitempty"`
}

// RenameSessionRequest is the body of PATCH /v1/sessions/{id}. Title is
// required and not empty (a nil Title is a missing one); the server trims
// it, and refuses one over 120 characters.
type RenameSessionRequest struct {
	Title *string `msgpack:"title" json:"title"`
}

// ApprovalMode says which tool calls wait for the user's approval
// (Session.ApprovalMode, the value of ActionSetApprovalMode).
type ApprovalMode string

// Approval modes.
const (
	ApprovalAsk  ApprovalMode = "ask"  // every tool call waits for the user's approval
	ApprovalAuto ApprovalMode = "auto" // only tools that always need approval wait
)
