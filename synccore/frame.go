package synccore

// ProtocolVersion is sent in the hello frame; a client refuses another major.
const ProtocolVersion = 1

// Frame kinds sent by the server on a subscription. See docs/protocol.md.
const (
	FrameHello   = "hello"   // first frame of every subscription
	FrameMessage = "message" // a committed full message snapshot
	FramePart    = "part"    // upsert of one part in a streaming projection
	FrameDelta   = "delta"   // text appended to a streaming text/reasoning part
	FrameResync  = "resync"  // the server gave up on this subscriber: re-read the snapshot
	FrameError   = "error"   // a typed error; the subscription ends after it
)

// Frame is one mutation or control frame. Every WebSocket binary message on
// a subscription is a msgpack array of one or more frames, in order. Seq
// numbers the frames of one subscription 1, 2, 3... without gaps, across
// WebSocket messages, so a client can prove continuity.
type Frame struct {
	Seq  uint64 `msgpack:"seq" json:"seq"`
	Kind string `msgpack:"kind" json:"kind"`

	// hello
	Protocol     int    `msgpack:"protocol,omitempty" json:"protocol,omitempty"`
	SessionID    string `msgpack:"session_id,omitempty" json:"session_id,omitempty"`
	HeadSequence int64  `msgpack:"head_sequence,omitempty" json:"head_sequence,omitempty"`

	// message
	Message *Message `msgpack:"message,omitempty" json:"message,omitempty"`

	// part and delta: MessageID names the message, Revision the committed
	// revision of that message the projection builds on.
	MessageID string `msgpack:"message_id,omitempty" json:"message_id,omitempty"`
	Revision  int64  `msgpack:"revision,omitempty" json:"revision,omitempty"`
	// part
	Part *Part `msgpack:"part,omitempty" json:"part,omitempty"`
	// delta: Text lands at byte Offset of the part's UTF-8 text, i.e. Offset
	// must equal the length of the text the client already has.
	PartID string `msgpack:"part_id,omitempty" json:"part_id,omitempty"`
	Offset int64  `msgpack:"offset,omitempty" json:"offset,omitempty"`
	Text   string `msgpack:"text,omitempty" json:"text,omitempty"`

	// part and message: texts sent without the beginning the client holds
	// (docs/protocol.md §4.5, only to a subscriber that asked with kept=1):
	// the part named has the first Len bytes of the client's text of that
	// part, which must be exactly Len bytes long, in front of its text.
	Kept []KeptLen `msgpack:"kept,omitempty" json:"kept,omitempty"`

	// resync and error
	Code   string `msgpack:"code,omitempty" json:"code,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// KeptLen names a part of a part or message frame whose text the client
// holds the first Len bytes of (Frame.Kept).
type KeptLen struct {
	PartID string `msgpack:"part_id" json:"part_id"`
	Len    int64  `msgpack:"len" json:"len"`
}
