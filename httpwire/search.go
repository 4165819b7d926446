package httpwire

// SearchHit is one message found by GET /v1/search: the session whose
// messages hold it (for a fork's shared prefix, the session it was written
// in), its sequence and id there (open the session with
// ?around_sequence=Sequence), and a snippet of its text. Snippet is an
// HTML fragment: the text escaped (&, <, >, ", '), each matching word in
// <mark>...</mark>, nothing else; a plain-text client drops the two tags
// and unescapes the rest.
type SearchHit struct {
	SessionID string `msgpack:"session_id" json:"session_id"`
	MessageID string `msgpack:"message_id" json:"message_id"`
	Sequence  int64  `msgpack:"sequence" json:"sequence"`
	Role      string `msgpack:"role" json:"role"`
	CreatedAt int64  `msgpack:"created_at" json:"created_at"`
	Snippet   string `msgpack:"snippet" json:"snippet"`
	// Title is the session's title when the hit was read.
	Title string `msgpack:"title" json:"title"`
}

// SearchResults is the answer of GET /v1/search?q=&limit=&cursor=: hits
// newest first; NextCursor, when more remain, is the cursor of the next
// page (an opaque string).
type SearchResults struct {
	Items      []SearchHit `msgpack:"items" json:"items"`
	NextCursor string      `msgpack:"next_cursor,omitempty" json:"next_cursor,omitempty"`
}
