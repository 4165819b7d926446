package wire

import "github.com/agentsync/agentsync/synccore"

// abi.go is what the WebAssembly module's exports call on a Client
// (docs/protocol.md §7): each takes and answers msgpack bytes, and the
// Append* forms write into a buffer the caller reuses, so a delta
// allocates nothing in the module.

// HandleBytes handles one msgpack Event and answers a msgpack Output. It
// never panics on bad input: a malformed event is a typed error in the
// Output.
func HandleBytes(c *synccore.Client, event []byte) []byte { return impl.HandleBytes(c, event) }

// AppendHandleBytes is HandleBytes appending its Output to dst.
func AppendHandleBytes(c *synccore.Client, dst, event []byte) []byte {
	return impl.AppendHandleBytes(c, dst, event)
}

// AppendHandleChanges handles event and appends two msgpack values: the
// Output (nil when it only says to render one message) and the changes
// since the previous take, in the appends form when they only append
// text to held parts (agentsync_handle_changes). outLen is the Output's
// length.
func AppendHandleChanges(c *synccore.Client, dst, event []byte) (res []byte, outLen int) {
	return impl.AppendHandleChanges(c, dst, event)
}

// AppendHandleCompact is AppendHandleChanges with the compact answer of
// agentsync_handle_compact (§7.4.2): when compact is not 0 nothing was
// appended and compact (SplitCompactAppend) says where the text went.
func AppendHandleCompact(c *synccore.Client, dst, event []byte) (res []byte, outLen int, compact uint32) {
	return impl.AppendHandleCompact(c, dst, event)
}

// AppendChangesBytes appends the changes since the previous take
// (synccore.Client.TakeChanges) as agentsync_changes answers them.
func AppendChangesBytes(c *synccore.Client, dst []byte) []byte {
	return impl.AppendChangesBytes(c, dst)
}

// ViewBytes is the client's view, encoded (agentsync_view).
func ViewBytes(c *synccore.Client) []byte { return impl.ViewBytes(c) }

// MessageBytes is one message of the view, encoded, or nil if absent
// (agentsync_message).
func MessageBytes(c *synccore.Client, id string) []byte { return impl.MessageBytes(c, id) }

// SplitCompactAppend unpacks a compact answer: the part's index in the
// high 16 bits and the offset of the text's first byte in the event in
// the low 16.
func SplitCompactAppend(v uint32) (part, textAt int) { return int(v >> 16), int(v & 0xffff) }

// HandleChanges is the answer of agentsync_handle_changes, decoded.
type HandleChanges struct {
	Output  *synccore.Output  // nil: the Output only said to render one message
	Changes *synccore.Changes // nil: the client is broken or the handle unknown (Output says which)
	// AppendsForm: Changes came in the appends form (only text appended
	// to held parts). With Output nil and a single append, such a take is
	// what a compact answer continues (§7.4.2).
	AppendsForm bool
}

// CompactBase reports whether a compact answer may follow this take: the
// appends form with one append and no Output.
func (hc HandleChanges) CompactBase() bool {
	ch := hc.Changes
	return hc.Output == nil && hc.AppendsForm && ch != nil && len(ch.Messages) == 1 && len(ch.Messages[0].Appends) == 1
}

// DecodeHandleChanges decodes the answer of agentsync_handle_changes.
func DecodeHandleChanges(b []byte) (HandleChanges, error) {
	out, ch, appends, err := impl.DecodeHandleChanges(b)
	if err != nil {
		return HandleChanges{}, err
	}
	return HandleChanges{Output: out, Changes: ch, AppendsForm: appends}, nil
}
