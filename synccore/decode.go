package synccore

// decode.go is the hand-written msgpack decoder of every shape of the
// protocol. It accepts what msgpack/v5's reflective decoder accepts for
// these structs and gives the same values: keys in any order, unknown keys
// skipped, nil for any field (its zero value), str or bin for strings, any
// integer form for ints (uint64 wraps into int64 as in msgpack/v5), the
// array form of a struct, and `any` values as in value.go. Its error
// messages are msgpack/v5's, so outputs that carry them are unchanged.
//
// The decoder never panics: every read is bounds-checked, and `any` values
// nest at most maxNesting deep.

// decoder is a reader that remembers its first failure; after one, every
// method returns zero values, and loops stop on d.bad.
type decoder struct {
	r   reader
	bad bool
	msg string
	// alias lets Event.data alias the input (HandleBytes copies what it
	// keeps); the exported decoders return owned bytes.
	alias bool
	// partSlab is where the parts of a page's messages are cut from, a
	// few allocations per page instead of one per message; msgsLeft counts
	// the messages of the page still to read, to size it.
	partSlab []Part
	msgsLeft int
}

func (d *decoder) fail(msg string) {
	if !d.bad {
		d.bad, d.msg = true, msg
	}
}

// decodeWith runs fn over b, which must hold exactly one value.
func decodeWith(b []byte, what string, fn func(d *decoder)) error {
	if len(b) == 0 {
		return Errorf(CodeMalformed, "%s: empty input", what)
	}
	d := decoder{r: reader{b: b}}
	fn(&d)
	return d.finish(what)
}

// finish turns the decoder's state into the typed error of what, if any.
func (d *decoder) finish(what string) error {
	if d.bad {
		if !nestingOK(d.r.b) {
			return Errorf(CodeMalformed, "%s: nested deeper than %d levels or truncated", what, maxNesting)
		}
		return &Error{Code: CodeMalformed, Message: what + ": " + d.msg}
	}
	if !d.r.done() {
		return Errorf(CodeMalformed, "%s: %d trailing bytes", what, len(d.r.b)-d.r.i)
	}
	return nil
}

func (d *decoder) code() (byte, bool) {
	if d.bad {
		return 0, false
	}
	c, ok := d.r.byte1()
	if !ok {
		d.fail("EOF")
	}
	return c, ok
}

// lenAfter reads the length of the map or array whose code c was just read.
func (d *decoder) lenAfter(c byte) int {
	var n int
	ok := true
	switch c {
	case 0xdc, 0xde:
		n, ok = d.r.length(2)
	case 0xdd, 0xdf:
		n, ok = d.r.length(4)
	default:
		n = int(c & 0x0f)
	}
	if !ok {
		d.fail("unexpected EOF")
		return 0
	}
	return n
}

// rawBytes reads a str, bin or nil (nil: no bytes), aliasing the input.
func (d *decoder) rawBytes() []byte {
	c, ok := d.code()
	if !ok {
		return nil
	}
	var n int
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xc0:
		return nil
	case c == 0xd9 || c == 0xc4:
		n, ok = d.r.length(1)
	case c == 0xda || c == 0xc5:
		n, ok = d.r.length(2)
	case c == 0xdb || c == 0xc6:
		n, ok = d.r.length(4)
	default:
		d.fail("msgpack: invalid code=" + hex8(c) + " decoding string/bytes length")
		return nil
	}
	var p []byte
	if ok {
		p, ok = d.r.n(n)
	}
	if !ok {
		d.fail("unexpected EOF")
	}
	return p
}

// string reads a string field (str, bin or nil). Well-known values (types,
// states, roles) come back as constants, without allocating.
func (d *decoder) string() string {
	return internString(d.rawBytes())
}

// sharedString is string for a field whose values repeat across a page:
// each distinct short value is allocated once per page.
func (d *decoder) sharedString() string {
	if d.r.shared == nil || d.r.i >= len(d.r.b) || d.r.b[d.r.i]&0xe0 != 0xa0 {
		return d.string()
	}
	b := d.rawBytes()
	if s, ok := d.r.shared[string(b)]; ok {
		return s
	}
	s := internString(b)
	d.r.shared[s] = s
	return s
}

func internString(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "text":
		return "text"
	case "reasoning":
		return "reasoning"
	case "tool":
		return "tool"
	case "done":
		return "done"
	case "streaming":
		return "streaming"
	case "agent":
		return "agent"
	case "user":
		return "user"
	case "visible":
		return "visible"
	case "internal":
		return "internal"
	}
	return string(b)
}

// key reads a map key (aliasing the input) for a switch.
func (d *decoder) key() []byte { return d.rawBytes() }

// bytes reads a []byte field: nil stays nil, an empty str or bin is an
// empty, non-nil slice (as msgpack/v5 gives).
func (d *decoder) bytes() []byte {
	if d.r.i < len(d.r.b) && d.r.b[d.r.i] == 0xc0 {
		d.r.i++
		return nil
	}
	p := d.rawBytes()
	if d.bad {
		return nil
	}
	if d.alias && len(p) > 0 {
		return p
	}
	return append(make([]byte, 0, len(p)), p...)
}

// u64 reads any integer (or nil) as msgpack/v5's DecodeUint64 does:
// negative values wrap.
func (d *decoder) u64() uint64 {
	c, ok := d.code()
	if !ok {
		return 0
	}
	u, ok := d.intAfter(c)
	if !ok {
		d.fail("msgpack: invalid code=" + hex8(c) + " decoding uint64")
	}
	return u
}

// i64 reads any integer (or nil) as msgpack/v5's DecodeInt64 does: a
// uint64 above MaxInt64 wraps.
func (d *decoder) i64() int64 {
	c, ok := d.code()
	if !ok {
		return 0
	}
	u, ok := d.intAfter(c)
	if !ok {
		d.fail("msgpack: invalid code=" + hex8(c) + " decoding int64")
	}
	return int64(u)
}

// intAfter reads the integer whose code c was read, as the two's
// complement bits of an int64; ok is false for a code that is no integer.
func (d *decoder) intAfter(c byte) (uint64, bool) {
	switch {
	case c <= 0x7f || c >= 0xe0:
		return uint64(int64(int8(c))), true
	case c == 0xc0:
		return 0, true
	}
	var k int
	switch c {
	case 0xcc, 0xd0:
		k = 1
	case 0xcd, 0xd1:
		k = 2
	case 0xce, 0xd2:
		k = 4
	case 0xcf, 0xd3:
		k = 8
	default:
		return 0, false
	}
	p, ok := d.r.n(k)
	if !ok {
		d.fail("unexpected EOF")
		return 0, true
	}
	var u uint64
	for _, x := range p {
		u = u<<8 | uint64(x)
	}
	if c >= 0xd0 { // signed: extend the sign
		shift := uint(64 - 8*k)
		u = uint64(int64(u<<shift) >> shift)
	}
	return u, true
}

func (d *decoder) boolean() bool {
	c, ok := d.code()
	switch {
	case !ok:
		return false
	case c == 0xc3:
		return true
	case c == 0xc2 || c == 0xc0:
		return false
	}
	d.fail("msgpack: invalid code=" + hex8(c) + " decoding bool")
	return false
}

// arrayLen reads an array header; nil is -1.
func (d *decoder) arrayLen() int {
	c, ok := d.code()
	switch {
	case !ok:
		return 0
	case c == 0xc0:
		return -1
	case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
		return d.lenAfter(c)
	}
	d.fail("msgpack: invalid code=" + hex8(c) + " decoding array length")
	return 0
}

// isNil consumes a nil if one comes next.
func (d *decoder) isNil() bool {
	if !d.bad && d.r.i < len(d.r.b) && d.r.b[d.r.i] == 0xc0 {
		d.r.i++
		return true
	}
	return false
}

// structLen reads the header of a struct of nfields fields: a map of n
// keys; nil or an empty array, the zero struct; or msgpack/v5's array form,
// one value per field in declared order (arr).
func (d *decoder) structLen(nfields int) (n int, arr, zero bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return 0, false, false
	case c&0xf0 == 0x80 || c == 0xde || c == 0xdf:
		return d.lenAfter(c), false, false
	case c == 0xc0:
		return 0, false, true
	case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
		n = d.lenAfter(c)
		if n == 0 {
			return 0, false, true
		}
		if n != nfields {
			d.fail("msgpack: number of fields in array-encoded struct has changed")
			return 0, false, false
		}
		return n, true, false
	}
	d.fail("msgpack: unexpected code=" + hex8(c) + " decoding map length")
	return 0, false, false
}

// fieldKey returns the key of entry i of a struct: read from the map, or
// the declared field name in the array form.
func (d *decoder) fieldKey(arr bool, names [][]byte, i int) []byte {
	if arr {
		return names[i]
	}
	return d.key()
}

func (d *decoder) skip() {
	if !d.bad && !d.r.skip() {
		d.fail("unexpected EOF")
	}
}

// keyList turns field names into the byte keys fieldKey hands out.
func keyList(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}

// Field names in declared order: msgpack/v5's array form of each struct.
var (
	eventKeys = keyList("type", "session_id", "page_limit", "include_internal", "data", "request_id",
		"page", "error", "jitter", "timer_id")
	frameKeys = keyList("seq", "kind", "protocol", "session_id", "head_sequence", "message", "message_id",
		"revision", "part", "part_id", "offset", "text", "code", "reason")
	pageKeys    = keyList("items", "total", "start_sequence", "end_sequence", "next_before_sequence", "has_more")
	messageKeys = keyList("message_id", "session_id", "sequence", "revision", "role", "state", "turn_id",
		"visibility", "created_at", "parts")
	partKeys = keyList("part_id", "sequence", "type", "step_id", "state", "text", "tag", "context", "url",
		"media_type", "filename", "data_type", "data", "data_id", "tool_call_id", "tool_name", "input",
		"output", "interaction_id", "status", "request", "response", "action_id", "action_type", "title",
		"scope", "code", "message", "recoverable")
	outputKeys  = keyList("commands", "error")
	errorKeys   = keyList("code", "message")
	commandKeys = keyList("type", "session_id", "request_id", "limit", "before_sequence", "include_internal",
		"timer_id", "delay_ms", "message_ids", "reset", "status", "reason")
	viewKeys = keyList("session_id", "status", "messages", "total", "has_more_older", "next_before_sequence",
		"loading_older", "include_internal", "digest")
)

func (d *decoder) event(ev *Event) {
	n, arr, zero := d.structLen(len(eventKeys))
	if zero {
		*ev = Event{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, eventKeys, i); string(k) {
		case "type":
			ev.Type = eventName(d.rawBytes())
		case "session_id":
			ev.SessionID = d.string()
		case "page_limit":
			ev.PageLimit = int(d.i64())
		case "include_internal":
			ev.IncludeInternal = d.boolean()
		case "data":
			ev.Data = d.bytes()
		case "request_id":
			ev.RequestID = d.u64()
		case "page":
			if d.isNil() {
				ev.Page = nil
			} else {
				ev.Page = &MessagePage{}
				d.page(ev.Page)
			}
		case "error":
			ev.Error = d.string()
		case "jitter":
			ev.Jitter = d.i64()
		case "timer_id":
			ev.TimerID = d.u64()
		default:
			d.skip()
		}
	}
}

// eventName returns the constant for a known event type (no allocation).
func eventName(b []byte) string {
	for _, e := range events {
		if e == string(b) {
			return e
		}
	}
	return string(b)
}

func (d *decoder) frame(f *Frame) {
	n, arr, zero := d.structLen(len(frameKeys))
	if zero {
		*f = Frame{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, frameKeys, i); string(k) {
		case "seq":
			f.Seq = d.u64()
		case "kind":
			f.Kind = d.string()
		case "protocol":
			f.Protocol = int(d.i64())
		case "session_id":
			f.SessionID = d.string()
		case "head_sequence":
			f.HeadSequence = d.i64()
		case "message":
			if d.isNil() {
				f.Message = nil
			} else {
				f.Message = &Message{}
				d.message(f.Message)
			}
		case "message_id":
			f.MessageID = d.string()
		case "revision":
			f.Revision = d.i64()
		case "part":
			if d.isNil() {
				f.Part = nil
			} else {
				f.Part = &Part{}
				d.part(f.Part)
			}
		case "part_id":
			f.PartID = d.string()
		case "offset":
			f.Offset = d.i64()
		case "text":
			f.Text = d.string()
		case "code":
			f.Code = d.string()
		case "reason":
			f.Reason = d.string()
		default:
			d.skip()
		}
	}
}

func (d *decoder) page(p *MessagePage) {
	n, arr, zero := d.structLen(len(pageKeys))
	if zero {
		*p = MessagePage{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, pageKeys, i); string(k) {
		case "items":
			p.Items = d.messages()
		case "total":
			p.Total = d.i64()
		case "start_sequence":
			p.StartSequence = d.i64()
		case "end_sequence":
			p.EndSequence = d.i64()
		case "next_before_sequence":
			p.NextBeforeSequence = d.i64()
		case "has_more":
			p.HasMore = d.boolean()
		default:
			d.skip()
		}
	}
}

// messages reads a []Message: nil stays nil, [] is empty and non-nil.
func (d *decoder) messages() []Message {
	n := d.arrayLen()
	if n < 0 || d.bad {
		return nil
	}
	// Every element takes at least a byte, so n is bounded by the input;
	// the capacity is bounded further so a lying header cannot make a
	// huge allocation.
	ms := make([]Message, 0, min(n, 256))
	for i := range n {
		if d.bad {
			return nil
		}
		d.msgsLeft = n - i
		ms = append(ms, Message{})
		d.message(&ms[len(ms)-1])
	}
	d.msgsLeft, d.partSlab = 0, nil
	return ms
}

func (d *decoder) message(m *Message) {
	n, arr, zero := d.structLen(len(messageKeys))
	if zero {
		*m = Message{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, messageKeys, i); string(k) {
		case "message_id":
			m.MessageID = d.string()
		case "session_id":
			m.SessionID = d.sharedString()
		case "sequence":
			m.Sequence = d.i64()
		case "revision":
			m.Revision = d.i64()
		case "role":
			m.Role = Role(d.sharedString())
		case "state":
			m.State = MessageState(d.sharedString())
		case "turn_id":
			m.TurnID = d.sharedString()
		case "visibility":
			m.Visibility = Visibility(d.sharedString())
		case "created_at":
			m.CreatedAt = d.i64()
		case "parts":
			m.Parts = d.parts()
		default:
			d.skip()
		}
	}
}

func (d *decoder) parts() []Part {
	n := d.arrayLen()
	if n < 0 || d.bad {
		return nil
	}
	var ps []Part
	if d.msgsLeft > 1 && n > 0 && n <= 64 {
		if len(d.partSlab) < n {
			// Room for the rest of the page if its messages are like this
			// one, bounded (each part takes at least a byte of input).
			d.partSlab = make([]Part, max(n, min(n*d.msgsLeft, 256, len(d.r.b)-d.r.i)))
		}
		ps, d.partSlab = d.partSlab[:0:n], d.partSlab[n:]
	} else {
		ps = make([]Part, 0, min(n, 64))
	}
	for range n {
		if d.bad {
			return nil
		}
		ps = append(ps, Part{})
		d.part(&ps[len(ps)-1])
	}
	return ps
}

func (d *decoder) part(p *Part) {
	n, arr, zero := d.structLen(len(partKeys))
	if zero {
		*p = Part{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, partKeys, i); string(k) {
		case "part_id":
			p.PartID = d.sharedString()
		case "sequence":
			p.Sequence = d.i64()
		case "type":
			p.Type = PartType(d.string())
		case "step_id":
			p.StepID = d.sharedString()
		case "state":
			p.State = d.sharedString()
		case "text":
			p.Text = d.string()
		case "tag":
			p.Tag = d.string()
		case "context":
			p.Context = d.string()
		case "url":
			p.URL = d.string()
		case "media_type":
			p.MediaType = d.string()
		case "filename":
			p.Filename = d.string()
		case "data_type":
			p.DataType = d.string()
		case "data":
			p.Data = d.anyValue(0)
		case "data_id":
			p.DataID = d.string()
		case "tool_call_id":
			p.ToolCallID = d.string()
		case "tool_name":
			p.ToolName = d.sharedString()
		case "input":
			p.Input = d.anyValue(0)
		case "output":
			p.Output = d.anyValue(0)
		case "interaction_id":
			p.InteractionID = d.string()
		case "status":
			p.Status = d.string()
		case "request":
			p.Request = d.anyValue(0)
		case "response":
			p.Response = d.anyValue(0)
		case "action_id":
			p.ActionID = d.string()
		case "action_type":
			p.ActionType = d.string()
		case "title":
			p.Title = d.string()
		case "scope":
			p.Scope = d.string()
		case "code":
			p.Code = d.string()
		case "message":
			p.Message = d.string()
		case "recoverable":
			p.Recoverable = d.boolean()
		default:
			d.skip()
		}
	}
}

func (d *decoder) output(o *Output) {
	n, arr, zero := d.structLen(len(outputKeys))
	if zero {
		*o = Output{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, outputKeys, i); string(k) {
		case "commands":
			o.Commands = d.commands()
		case "error":
			if d.isNil() {
				o.Error = nil
			} else {
				o.Error = &Error{}
				d.error(o.Error)
			}
		default:
			d.skip()
		}
	}
}

func (d *decoder) error(e *Error) {
	n, arr, zero := d.structLen(len(errorKeys))
	if zero {
		*e = Error{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, errorKeys, i); string(k) {
		case "code":
			e.Code = d.string()
		case "message":
			e.Message = d.string()
		default:
			d.skip()
		}
	}
}

func (d *decoder) commands() []Command {
	n := d.arrayLen()
	if n < 0 || d.bad {
		return nil
	}
	cs := make([]Command, 0, min(n, 64))
	for range n {
		if d.bad {
			return nil
		}
		cs = append(cs, Command{})
		d.command(&cs[len(cs)-1])
	}
	return cs
}

func (d *decoder) command(c *Command) {
	n, arr, zero := d.structLen(len(commandKeys))
	if zero {
		*c = Command{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, commandKeys, i); string(k) {
		case "type":
			c.Type = d.string()
		case "session_id":
			c.SessionID = d.string()
		case "request_id":
			c.RequestID = d.u64()
		case "limit":
			c.Limit = int(d.i64())
		case "before_sequence":
			c.BeforeSequence = d.i64()
		case "include_internal":
			c.IncludeInternal = d.boolean()
		case "timer_id":
			c.TimerID = d.u64()
		case "delay_ms":
			c.DelayMs = d.i64()
		case "message_ids":
			c.MessageIDs = d.strings()
		case "reset":
			c.Reset = d.boolean()
		case "status":
			c.Status = d.string()
		case "reason":
			c.Reason = d.string()
		default:
			d.skip()
		}
	}
}

// strings reads a []string: nil stays nil, [] is empty and non-nil.
func (d *decoder) strings() []string {
	n := d.arrayLen()
	if n < 0 || d.bad {
		return nil
	}
	ss := make([]string, 0, min(n, 64))
	for range n {
		ss = append(ss, d.string())
		if d.bad {
			return nil
		}
	}
	return ss
}

func (d *decoder) view(v *View) {
	n, arr, zero := d.structLen(len(viewKeys))
	if zero {
		*v = View{}
	}
	for i := 0; i < n && !d.bad; i++ {
		switch k := d.fieldKey(arr, viewKeys, i); string(k) {
		case "session_id":
			v.SessionID = d.string()
		case "status":
			v.Status = d.string()
		case "messages":
			v.Messages = d.messages()
		case "total":
			v.Total = d.i64()
		case "has_more_older":
			v.HasMoreOlder = d.boolean()
		case "next_before_sequence":
			v.NextBeforeSequence = d.i64()
		case "loading_older":
			v.LoadingOlder = d.boolean()
		case "include_internal":
			v.IncludeInternal = d.boolean()
		case "digest":
			v.Digest = d.string()
		default:
			d.skip()
		}
	}
}
