package synccore

// appendOutputOf appends the encoding of Output{Commands: cmds, Error: err}
// (appendOutput, generated). handleBytes runs it for every event, including
// every delta, so it must not allocate beyond the result slice. The bytes
// equal what msgpack/v5 writes for the same Output with UseCompactInts(true),
// except that Commands is always an array, never nil.
func appendOutputOf(b []byte, cmds []Command, err *Error) []byte {
	if cmds == nil {
		cmds = []Command{}
	}
	return appendOutput(b, &Output{Commands: cmds, Error: err})
}
