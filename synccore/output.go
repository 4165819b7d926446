package synccore

// output.go encodes an Output by hand. HandleBytes runs it for every event,
// including every delta, so it must not allocate beyond the result slice.
// The bytes equal what msgpack/v5 writes for the same Output with
// UseCompactInts(true) (struct fields in declared order, omitempty fields
// left out), except that Commands is always an array, never nil.

// appendOutput appends the encoding of Output{Commands: cmds, Error: err}.
func appendOutput(b []byte, cmds []Command, err *Error) []byte {
	n := 1
	if err != nil {
		n = 2
	}
	b = appendMapHeader(b, n)
	b = appendString(b, "commands")
	b = appendArrayHeader(b, len(cmds))
	for i := range cmds {
		b = appendCommand(b, &cmds[i])
	}
	if err != nil {
		b = appendString(b, "error")
		b = appendMapHeader(b, 2)
		b = appendString(b, "code")
		b = appendString(b, err.Code)
		b = appendString(b, "message")
		b = appendString(b, err.Message)
	}
	return b
}

// appendCommand appends one Command in field order, omitting empty fields.
func appendCommand(b []byte, c *Command) []byte {
	n := 1
	for _, set := range [...]bool{c.SessionID != "", c.RequestID != 0, c.Limit != 0,
		c.BeforeSequence != 0, c.IncludeInternal, c.TimerID != 0, c.DelayMs != 0,
		len(c.MessageIDs) != 0, c.Reset, c.Status != "", c.Reason != ""} {
		if set {
			n++
		}
	}
	b = appendMapHeader(b, n)
	b = appendString(b, "type")
	b = appendString(b, c.Type)
	if c.SessionID != "" {
		b = appendString(b, "session_id")
		b = appendString(b, c.SessionID)
	}
	if c.RequestID != 0 {
		b = appendString(b, "request_id")
		b = appendUint(b, c.RequestID)
	}
	if c.Limit != 0 {
		b = appendString(b, "limit")
		b = appendInt(b, int64(c.Limit))
	}
	if c.BeforeSequence != 0 {
		b = appendString(b, "before_sequence")
		b = appendInt(b, c.BeforeSequence)
	}
	if c.IncludeInternal {
		b = appendString(b, "include_internal")
		b = appendBool(b, true)
	}
	if c.TimerID != 0 {
		b = appendString(b, "timer_id")
		b = appendUint(b, c.TimerID)
	}
	if c.DelayMs != 0 {
		b = appendString(b, "delay_ms")
		b = appendInt(b, c.DelayMs)
	}
	if len(c.MessageIDs) != 0 {
		b = appendString(b, "message_ids")
		b = appendArrayHeader(b, len(c.MessageIDs))
		for _, id := range c.MessageIDs {
			b = appendString(b, id)
		}
	}
	if c.Reset {
		b = appendString(b, "reset")
		b = appendBool(b, true)
	}
	if c.Status != "" {
		b = appendString(b, "status")
		b = appendString(b, c.Status)
	}
	if c.Reason != "" {
		b = appendString(b, "reason")
		b = appendString(b, c.Reason)
	}
	return b
}
