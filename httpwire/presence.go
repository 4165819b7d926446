package httpwire

// TypingRequest is the body of POST /v1/sessions/{id}/typing: the caller's
// principal is typing in the session (true) or stopped (false). Typing
// lapses a few seconds after it was last said (docs/protocol.md §4.6).
type TypingRequest struct {
	Typing bool `msgpack:"typing" json:"typing"`
}

// Viewer is one principal in a presence signal (§4.6): its open
// subscriptions of the session, across nodes, and whether it is typing.
type Viewer struct {
	Principal   string `msgpack:"principal" json:"principal"`
	Connections int    `msgpack:"connections" json:"connections"`
	Typing      bool   `msgpack:"typing" json:"typing"`
}
