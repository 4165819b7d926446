package synccore

// changes_codec.go encodes and decodes Changes, the answer of
// agentsync_changes, with the generated codec of every other shape
// (codec.go).

// EncodeChanges encodes ch as Client.AppendChangesBytes writes it.
func EncodeChanges(ch Changes) []byte { return mustEncodeStrict(appendChanges(nil, &ch)) }

// DecodeChanges decodes the answer of agentsync_changes.
func DecodeChanges(b []byte) (Changes, error) {
	var ch Changes
	// No interning table (DecodeView's): a take is usually one delta, and
	// the table would cost more than the few strings it holds.
	err := decodeWith(b, "changes", func(d *decoder) { d.decodeChanges(&ch) })
	if err != nil {
		return Changes{}, err
	}
	return ch, nil
}
