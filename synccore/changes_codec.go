package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// changes_codec.go encodes and decodes Changes, the answer of
// agentsync_changes, with the generated codec of every other shape
// (codec.go).

// encodeChanges encodes ch as Client.AppendChangesBytes writes it.
func encodeChanges(ch Changes) []byte { return mustEncodeStrict(appendChanges(nil, &ch)) }

// decodeChanges decodes the answer of agentsync_changes.
func decodeChanges(b []byte) (Changes, error) {
	var ch Changes
	// No interning table (decodeView's): a take is usually one delta, and
	// the table would cost more than the few strings it holds.
	err := decodeWith(b, "changes", func(d *decoder) { d.decodeChanges(&ch) })
	if err != nil {
		return Changes{}, err
	}
	return ch, nil
}

// handleChangesResult is the answer of agentsync_handle_changes
// (Client.AppendHandleChanges), decoded.
type handleChangesResult struct {
	Output  *Output  // nil: the Output only said to render one message
	Changes *Changes // nil: the client is broken or the handle unknown (Output says which)
	// AppendsForm: Changes came in the appends form (only text appended
	// to held parts). With Output nil and a single append, such a take is
	// what a compact answer continues (§7.4.2).
	AppendsForm bool
}

// decodeHandleChanges decodes the answer of appendHandleChanges; the
// appends form comes back as the Changes it stands for.
func decodeHandleChanges(b []byte) (handleChangesResult, error) {
	var hc handleChangesResult
	r := msgp.Reader{Buf: b}
	if !r.Skip() {
		return hc, Errorf(CodeMalformed, "handle_changes: not msgpack")
	}
	first, rest := b[:r.Pos], b[r.Pos:]
	if first[0] != 0xc0 {
		o, err := decodeOutput(first)
		if err != nil {
			return hc, err
		}
		hc.Output = &o
	}
	if len(rest) == 0 || len(rest) == 1 && rest[0] == 0xc0 {
		return hc, nil // broken, or (the Output alone) an unknown handle
	}
	var ch Changes
	var err error
	if c := rest[0]; c&0xf0 == 0x90 || c == 0xdc || c == 0xdd {
		hc.AppendsForm = true
		err = decodeWith(rest, "changes", func(d *decoder) { d.appends(&ch) })
	} else {
		ch, err = decodeChanges(rest)
	}
	if err != nil {
		return hc, err
	}
	hc.Changes = &ch
	return hc, nil
}

// appends decodes the appends form (appendAppends) into the Changes it
// stands for: one MessageChange per run of appends to the same message.
func (d *decoder) appends(ch *Changes) {
	n := d.ArrayLen()
	if d.Failed() || n < 4 || (n-4)%3 != 0 {
		d.Fail("appends: an array of 4+3k values expected")
		return
	}
	ch.Status = d.Str()
	ch.Total = d.I64()
	flags := d.I64()
	ch.HasMoreOlder = flags&appendsHasMoreOlder != 0
	ch.LoadingOlder = flags&appendsLoadingOlder != 0
	ch.IncludeInternal = flags&appendsIncludeInternal != 0
	ch.NextBeforeSequence = d.I64()
	ch.Messages = []MessageChange{}
	for k := 0; k < (n-4)/3 && !d.Failed(); k++ {
		id := d.Str()
		ta := TextAppend{Index: int(d.I64()), Text: d.Str()}
		if last := len(ch.Messages) - 1; last >= 0 && ch.Messages[last].MessageID == id {
			ch.Messages[last].Appends = append(ch.Messages[last].Appends, ta)
		} else {
			ch.Messages = append(ch.Messages, MessageChange{MessageID: id, Appends: []TextAppend{ta}})
		}
	}
}
