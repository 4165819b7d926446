package synccore

import "github.com/agentsync/agentsync/internal/corelink"

// link.go hands the byte-level entry points — the codec, the digest and
// the calls the WebAssembly module makes on a Client — to internal/wire,
// which exports them to this module's server, Go host and module
// (internal/corelink says why this way). They are not synccore's API: an
// application uses the model, Client, Mirror and MessageList.

func init() { corelink.Core = linked{} }

// linked implements internal/wire's core interface.
type linked struct{}

func (linked) AppendFrames(dst []byte, frames []Frame) ([]byte, error) {
	return appendFrameList(dst, frames)
}
func (linked) AppendPage(dst []byte, p *MessagePage) ([]byte, error) {
	return appendPageChecked(dst, p)
}
func (linked) AppendMessage(dst []byte, m *Message) ([]byte, error) {
	return appendMessageChecked(dst, m)
}
func (linked) AppendPart(dst []byte, p *Part) ([]byte, error) { return appendPartChecked(dst, p) }
func (linked) DecodePart(b []byte) (Part, error)              { return decodePartBytes(b) }
func (linked) AppendFramesEventHeader(dst []byte, n int) []byte {
	return appendFramesEventHeader(dst, n)
}

func (linked) EncodeFrames(frames []Frame) []byte         { return encodeFrames(frames) }
func (linked) DecodeFrames(b []byte) ([]Frame, error)     { return decodeFrames(b) }
func (linked) EncodePage(p MessagePage) []byte            { return encodePage(p) }
func (linked) DecodePage(b []byte) (MessagePage, error)   { return decodePage(b) }
func (linked) EncodeEvent(ev Event) []byte                { return encodeEvent(ev) }
func (linked) DecodeEvent(b []byte) (Event, error)        { return decodeEvent(b) }
func (linked) EncodeOutput(o Output) []byte               { return encodeOutput(o) }
func (linked) DecodeOutput(b []byte) (Output, error)      { return decodeOutput(b) }
func (linked) EncodeView(v View) []byte                   { return encodeView(v) }
func (linked) DecodeView(b []byte) (View, error)          { return decodeView(b) }
func (linked) EncodeMessage(m Message) []byte             { return encodeMessage(m) }
func (linked) DecodeMessage(b []byte) (Message, error)    { return decodeMessage(b) }
func (linked) EncodeChanges(ch Changes) []byte            { return encodeChanges(ch) }
func (linked) DecodeChanges(b []byte) (Changes, error)    { return decodeChanges(b) }
func (linked) DigestMessages(msgs []Message) string       { return digestMessages(msgs) }
func (linked) ValidateMessage(m Message) error            { return validateMessage(m) }
func (linked) ValidateFrame(f *Frame) error               { return validateFrame(f) }
func (linked) ValidatePart(role Role, p Part) error       { return validatePartValue(role, p) }
func (linked) Backoff(attempt int, jitter int64) int64    { return backoffDelay(attempt, jitter) }
func (linked) HandleBytes(c *Client, event []byte) []byte { return c.handleBytes(event) }
func (linked) ViewBytes(c *Client) []byte                 { return c.viewBytes() }
func (linked) MessageBytes(c *Client, id string) []byte   { return c.messageBytes(id) }
func (linked) AppendChangesBytes(c *Client, dst []byte) []byte {
	return c.appendChangesBytes(dst)
}
func (linked) AppendHandleBytes(c *Client, dst, event []byte) []byte {
	return c.appendHandleBytes(dst, event)
}
func (linked) AppendHandleChanges(c *Client, dst, event []byte) ([]byte, int) {
	return c.appendHandleChanges(dst, event)
}
func (linked) AppendHandleCompact(c *Client, dst, event []byte) ([]byte, int, uint32) {
	return c.appendHandleCompact(dst, event)
}
func (linked) DecodeHandleChanges(b []byte) (*Output, *Changes, bool, error) {
	hc, err := decodeHandleChanges(b)
	return hc.Output, hc.Changes, hc.AppendsForm, err
}
