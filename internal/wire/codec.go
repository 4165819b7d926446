package wire

import (
	"github.com/agentsync/agentsync/internal/corelink"
	"github.com/agentsync/agentsync/synccore"
)

// core is what synccore's link.go implements.
type core interface {
	AppendFrames(dst []byte, frames []synccore.Frame) ([]byte, error)
	AppendPage(dst []byte, p *synccore.MessagePage) ([]byte, error)
	AppendMessage(dst []byte, m *synccore.Message) ([]byte, error)
	AppendPart(dst []byte, p *synccore.Part) ([]byte, error)
	DecodePart(b []byte) (synccore.Part, error)
	AppendFramesEventHeader(dst []byte, n int) []byte
	EncodeFrames(frames []synccore.Frame) []byte
	DecodeFrames(b []byte) ([]synccore.Frame, error)
	EncodePage(p synccore.MessagePage) []byte
	DecodePage(b []byte) (synccore.MessagePage, error)
	EncodeEvent(ev synccore.Event) []byte
	DecodeEvent(b []byte) (synccore.Event, error)
	EncodeOutput(o synccore.Output) []byte
	DecodeOutput(b []byte) (synccore.Output, error)
	EncodeView(v synccore.View) []byte
	DecodeView(b []byte) (synccore.View, error)
	EncodeMessage(m synccore.Message) []byte
	DecodeMessage(b []byte) (synccore.Message, error)
	EncodeChanges(ch synccore.Changes) []byte
	DecodeChanges(b []byte) (synccore.Changes, error)
	DigestMessages(msgs []synccore.Message) string
	ValidateMessage(m synccore.Message) error
	ValidateFrame(f *synccore.Frame) error
	ValidatePart(role synccore.Role, p synccore.Part) error
	Backoff(attempt int, jitter int64) int64
	HandleBytes(c *synccore.Client, event []byte) []byte
	ViewBytes(c *synccore.Client) []byte
	MessageBytes(c *synccore.Client, id string) []byte
	AppendChangesBytes(c *synccore.Client, dst []byte) []byte
	AppendHandleBytes(c *synccore.Client, dst, event []byte) []byte
	AppendHandleChanges(c *synccore.Client, dst, event []byte) ([]byte, int)
	AppendHandleCompact(c *synccore.Client, dst, event []byte) ([]byte, int, uint32)
	DecodeHandleChanges(b []byte) (*synccore.Output, *synccore.Changes, bool, error)
}

// impl is set by synccore's init, which runs before this package's.
var impl = corelink.Core.(core)

// The append-style encoders are for servers that encode on a hot path (a
// WebSocket writer, a page handler, a store writing part bodies): they
// write into the caller's buffer, so a reused buffer makes encoding
// allocation-free. Unlike the Encode* functions they write a nil slice as
// msgpack nil, exactly as msgpack.Marshal (compact ints, sorted map keys)
// writes the same value. On failure (an `any` field holding a value
// msgpack cannot represent, such as a channel) they return dst unchanged
// and a CodeInternal error.

// AppendFrames appends one WebSocket message, a msgpack array of frames.
func AppendFrames(dst []byte, frames []synccore.Frame) ([]byte, error) {
	return impl.AppendFrames(dst, frames)
}

// AppendPage appends a messages() page.
func AppendPage(dst []byte, p *synccore.MessagePage) ([]byte, error) {
	return impl.AppendPage(dst, p)
}

// AppendMessage appends one message (a POST answer).
func AppendMessage(dst []byte, m *synccore.Message) ([]byte, error) {
	return impl.AppendMessage(dst, m)
}

// AppendPart appends one part, as a store keeps a part's body.
func AppendPart(dst []byte, p *synccore.Part) ([]byte, error) { return impl.AppendPart(dst, p) }

// DecodePart decodes a part AppendPart wrote.
func DecodePart(b []byte) (synccore.Part, error) { return impl.DecodePart(b) }

// AppendFramesEventHeader appends the head of a frames event whose data,
// n bytes of frames, the caller writes right after it: a host then passes
// a WebSocket message to the core without copying it into an Event.
func AppendFramesEventHeader(dst []byte, n int) []byte {
	return impl.AppendFramesEventHeader(dst, n)
}

// EncodeFrames encodes one WebSocket message, a msgpack array of frames.
func EncodeFrames(frames []synccore.Frame) []byte { return impl.EncodeFrames(frames) }

// DecodeFrames decodes and validates one WebSocket message.
func DecodeFrames(b []byte) ([]synccore.Frame, error) { return impl.DecodeFrames(b) }

// EncodePage encodes a messages() page.
func EncodePage(p synccore.MessagePage) []byte { return impl.EncodePage(p) }

// DecodePage decodes and validates a messages() page.
func DecodePage(b []byte) (synccore.MessagePage, error) { return impl.DecodePage(b) }

// EncodeEvent encodes an event for the module's agentsync_handle.
func EncodeEvent(ev synccore.Event) []byte { return impl.EncodeEvent(ev) }

// DecodeEvent decodes an event.
func DecodeEvent(b []byte) (synccore.Event, error) { return impl.DecodeEvent(b) }

// EncodeOutput encodes the answer of agentsync_handle.
func EncodeOutput(o synccore.Output) []byte { return impl.EncodeOutput(o) }

// DecodeOutput decodes the answer of agentsync_handle.
func DecodeOutput(b []byte) (synccore.Output, error) { return impl.DecodeOutput(b) }

// EncodeView encodes a view (agentsync_view).
func EncodeView(v synccore.View) []byte { return impl.EncodeView(v) }

// DecodeView decodes a view.
func DecodeView(b []byte) (synccore.View, error) { return impl.DecodeView(b) }

// EncodeMessage encodes one message (agentsync_message).
func EncodeMessage(m synccore.Message) []byte { return impl.EncodeMessage(m) }

// DecodeMessage decodes one message.
func DecodeMessage(b []byte) (synccore.Message, error) { return impl.DecodeMessage(b) }

// EncodeChanges encodes ch as agentsync_changes answers it.
func EncodeChanges(ch synccore.Changes) []byte { return impl.EncodeChanges(ch) }

// DecodeChanges decodes the answer of agentsync_changes.
func DecodeChanges(b []byte) (synccore.Changes, error) { return impl.DecodeChanges(b) }

// DigestMessages is the hex SHA-256 of the canonical encoding of msgs
// (docs/protocol.md §7.3), what synccore.Client.Digest answers for its view.
func DigestMessages(msgs []synccore.Message) string { return impl.DigestMessages(msgs) }

// ValidateMessage checks a message against the model's rules.
func ValidateMessage(m synccore.Message) error { return impl.ValidateMessage(m) }

// ValidatePart checks one part of a message of the given role.
func ValidatePart(role synccore.Role, p synccore.Part) error { return impl.ValidatePart(role, p) }

// Backoff is the reconnect delay in milliseconds the core asks for after
// attempt attempts with the host's jitter (docs/protocol.md §6.4).
func Backoff(attempt int, jitter int64) int64 { return impl.Backoff(attempt, jitter) }

// ValidateFrame checks a decoded frame against the model's rules.
func ValidateFrame(f *synccore.Frame) error { return impl.ValidateFrame(f) }
