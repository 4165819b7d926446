package httpwire

import "github.com/agentsync/agentsync/synccore"

// ForkRequest is the body of POST /v1/sessions/{id}/fork: a new session of
// the same conversation whose first BeforeSequence-1 messages are this
// one's (shared, never copied). BeforeSequence is 2..head+1, and every
// message before it must be done (409 conflict otherwise). With Parts the
// fork's first own message is that user message (an edit of the message
// at BeforeSequence) and its turn starts; with Regenerate the turn of the
// prefix's last user message runs again (a new reply at BeforeSequence);
// with neither it is "fork from here". The answer (201) is the new
// Session, naming ParentSessionID, ForkSequence and RootSessionID.
type ForkRequest struct {
	BeforeSequence int64           `msgpack:"before_sequence" json:"before_sequence"`
	Parts          []synccore.Part `msgpack:"parts,omitempty" json:"parts,omitempty"`
	Regenerate     bool            `msgpack:"regenerate,omitempty" json:"regenerate,omitempty"`
}

// Branch is one alternative at a position of a session's path: the
// session to switch to for it (the asked session for the one its own path
// takes) and its message at that position, which carries that session's
// id; no message for a fork with nothing at the position yet.
type Branch struct {
	SessionID string `msgpack:"session_id" json:"session_id"`
	// Index is the alternative's place, 0-based, in the order they were
	// made: a UI shows ‹ Index+1 / len(items) ›.
	Index   int               `msgpack:"index" json:"index"`
	Message *synccore.Message `msgpack:"message,omitempty" json:"message,omitempty"`
}

// BranchList is the answer of GET /v1/sessions/{id}/branches?sequence=N:
// the alternatives at position Sequence of the session's path (the
// sessions of its conversation that share the path before it and differ
// at it, this one included), and which of them this session's path takes.
type BranchList struct {
	Sequence int64    `msgpack:"sequence" json:"sequence"`
	Index    int      `msgpack:"index" json:"index"`
	Items    []Branch `msgpack:"items" json:"items"`
}

// BranchCount is one entry of a page's "branches" (beside its items,
// never inside a message): position Sequence of the path has Count
// alternatives and the path takes the one at Index (0-based). Positions
// with one alternative are left out.
type BranchCount struct {
	Sequence int64 `msgpack:"sequence" json:"sequence"`
	Count    int   `msgpack:"count" json:"count"`
	Index    int   `msgpack:"index" json:"index"`
}

// AlternativeList is the answer of GET
// /v1/sessions/{id}/alternatives?from=&to=: the positions of the range
// (default: the whole path, 1..head+1) that have more than one
// alternative, oldest first. A UI reads it once per switch to draw every
// arrow of a long path without reading its pages.
type AlternativeList struct {
	Items []BranchCount `msgpack:"items" json:"items"`
}
