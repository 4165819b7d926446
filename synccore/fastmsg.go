package synccore

import (
	"encoding/binary"
	"math"
)

// fastmsg.go reads messages, pages and whole frames without reflection:
// about 3x faster than msgpack/v5's generic decoder, which matters most in
// the WebAssembly hosts. It gives exactly what the generic decoder gives
// (`any` values as msgpack/v5's DecodeInterface makes them: int8 for a
// fixint, uint16 for a uint16, map[string]any, []any...). On anything it
// does not read exactly that way (an ext type, a nil where a string is
// expected, a struct encoded as an array) it reports false and the caller
// runs the generic decoder on the same bytes.

// fastString reads a str (or bin) as an owned string. Well-known values
// (types, states, roles) come back as constants, without allocating.
func (r *reader) fastString() (string, bool) {
	b, ok := r.str()
	if !ok {
		return "", false
	}
	switch string(b) {
	case "":
		return "", true
	case "text":
		return "text", true
	case "reasoning":
		return "reasoning", true
	case "tool":
		return "tool", true
	case "done":
		return "done", true
	case "streaming":
		return "streaming", true
	case "agent":
		return "agent", true
	case "user":
		return "user", true
	case "visible":
		return "visible", true
	case "internal":
		return "internal", true
	}
	return string(b), true
}

// sharedString is fastString for a field whose values repeat across a
// page: each distinct value is allocated once per page.
func (r *reader) sharedString() (string, bool) {
	if r.shared == nil || r.i >= len(r.b) || r.b[r.i]&0xe0 != 0xa0 {
		return r.fastString() // only short strings (fixstr) are shared
	}
	b, ok := r.str()
	if !ok {
		return "", false
	}
	if s, ok := r.shared[string(b)]; ok {
		return s, true
	}
	s := string(b)
	r.shared[s] = s
	return s, true
}

func (r *reader) fastBool() (bool, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return false, false
	case c == 0xc2:
		return false, true
	case c == 0xc3:
		return true, true
	}
	return false, false
}

// fastAny reads any value as msgpack/v5's DecodeInterface would.
func (r *reader) fastAny(depth int) (any, bool) {
	if depth > maxNesting {
		return nil, false
	}
	if r.i >= len(r.b) {
		return nil, false
	}
	c := r.b[r.i]
	switch {
	case c <= 0x7f || c >= 0xe0:
		r.i++
		return int8(c), true
	case c&0xf0 == 0x80 || c == 0xde || c == 0xdf:
		n, ok := r.mapHeader()
		if !ok {
			return nil, false
		}
		m := make(map[string]any, min(n, 64))
		for range n {
			k, ok := r.str()
			if !ok {
				return nil, false
			}
			v, ok := r.fastAny(depth + 1)
			if !ok {
				return nil, false
			}
			m[string(k)] = v
		}
		return m, true
	case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
		n, ok := r.arrayHeader()
		if !ok {
			return nil, false
		}
		s := make([]any, 0, min(n, 64))
		for range n {
			v, ok := r.fastAny(depth + 1)
			if !ok {
				return nil, false
			}
			s = append(s, v)
		}
		return s, true
	case c&0xe0 == 0xa0 || c == 0xd9 || c == 0xda || c == 0xdb:
		return r.fastString()
	case c == 0xc4 || c == 0xc5 || c == 0xc6:
		b, ok := r.str()
		if !ok {
			return nil, false
		}
		return append([]byte{}, b...), true
	case c == 0xc0:
		r.i++
		return nil, true
	case c == 0xc2 || c == 0xc3:
		r.i++
		return c == 0xc3, true
	}
	r.i++
	var k int
	switch c {
	case 0xcc, 0xd0:
		k = 1
	case 0xcd, 0xd1:
		k = 2
	case 0xce, 0xd2, 0xca:
		k = 4
	case 0xcf, 0xd3, 0xcb:
		k = 8
	default:
		return nil, false // ext types and the unused 0xc1: generic decoder
	}
	p, ok := r.n(k)
	if !ok {
		return nil, false
	}
	switch c {
	case 0xcc:
		return p[0], true
	case 0xcd:
		return binary.BigEndian.Uint16(p), true
	case 0xce:
		return binary.BigEndian.Uint32(p), true
	case 0xcf:
		return binary.BigEndian.Uint64(p), true
	case 0xd0:
		return int8(p[0]), true
	case 0xd1:
		return int16(binary.BigEndian.Uint16(p)), true
	case 0xd2:
		return int32(binary.BigEndian.Uint32(p)), true
	case 0xd3:
		return int64(binary.BigEndian.Uint64(p)), true
	case 0xca:
		return math.Float32frombits(binary.BigEndian.Uint32(p)), true
	default: // 0xcb
		return math.Float64frombits(binary.BigEndian.Uint64(p)), true
	}
}

// fastPart reads one Part.
func (r *reader) fastPart(p *Part) bool {
	n, ok := r.mapHeader()
	if !ok {
		return false
	}
	for range n {
		k, ok := r.str()
		if !ok {
			return false
		}
		var s *string
		var a *any
		switch string(k) {
		case "part_id":
			s = &p.PartID
		case "sequence":
			if p.Sequence, ok = r.int(); !ok {
				return false
			}
			continue
		case "type":
			v, ok := r.fastString()
			if !ok {
				return false
			}
			p.Type = PartType(v)
			continue
		case "recoverable":
			if p.Recoverable, ok = r.fastBool(); !ok {
				return false
			}
			continue
		case "step_id":
			s = &p.StepID
		case "state":
			s = &p.State
		case "text":
			s = &p.Text
		case "tag":
			s = &p.Tag
		case "context":
			s = &p.Context
		case "url":
			s = &p.URL
		case "media_type":
			s = &p.MediaType
		case "filename":
			s = &p.Filename
		case "data_type":
			s = &p.DataType
		case "data_id":
			s = &p.DataID
		case "tool_call_id":
			s = &p.ToolCallID
		case "tool_name":
			s = &p.ToolName
		case "interaction_id":
			s = &p.InteractionID
		case "status":
			s = &p.Status
		case "action_id":
			s = &p.ActionID
		case "action_type":
			s = &p.ActionType
		case "title":
			s = &p.Title
		case "scope":
			s = &p.Scope
		case "code":
			s = &p.Code
		case "message":
			s = &p.Message
		case "data":
			a = &p.Data
		case "input":
			a = &p.Input
		case "output":
			a = &p.Output
		case "request":
			a = &p.Request
		case "response":
			a = &p.Response
		default:
			if !r.skip() {
				return false
			}
			continue
		}
		if s != nil {
			if s == &p.StepID || s == &p.PartID || s == &p.ToolName || s == &p.State {
				*s, ok = r.sharedString()
			} else {
				*s, ok = r.fastString()
			}
			if !ok {
				return false
			}
		} else if *a, ok = r.fastAny(0); !ok {
			return false
		}
	}
	return true
}

// fastMessage reads one Message.
func (r *reader) fastMessage(m *Message) bool {
	n, ok := r.mapHeader()
	if !ok {
		return false
	}
	for range n {
		k, ok := r.str()
		if !ok {
			return false
		}
		var s string
		switch string(k) {
		case "sequence":
			m.Sequence, ok = r.int()
		case "revision":
			m.Revision, ok = r.int()
		case "created_at":
			m.CreatedAt, ok = r.int()
		case "parts":
			var np int
			if np, ok = r.arrayHeader(); ok {
				m.Parts = make([]Part, np)
				for i := range np {
					if !r.fastPart(&m.Parts[i]) {
						return false
					}
				}
			}
		case "message_id", "session_id", "role", "state", "turn_id", "visibility":
			if string(k) == "message_id" {
				s, ok = r.fastString()
			} else {
				s, ok = r.sharedString()
			}
			if ok {
				switch string(k) {
				case "message_id":
					m.MessageID = s
				case "session_id":
					m.SessionID = s
				case "role":
					m.Role = Role(s)
				case "state":
					m.State = MessageState(s)
				case "turn_id":
					m.TurnID = s
				case "visibility":
					m.Visibility = Visibility(s)
				}
			}
		default:
			ok = r.skip()
		}
		if !ok {
			return false
		}
	}
	return true
}

// fastPage reads a whole MessagePage; false means "use the generic decoder".
func fastPage(b []byte, p *MessagePage) bool {
	r := reader{b: b, shared: make(map[string]string, 16)}
	n, ok := r.mapHeader()
	if !ok {
		return false
	}
	for range n {
		k, ok := r.str()
		if !ok {
			return false
		}
		switch string(k) {
		case "items":
			var ni int
			if ni, ok = r.arrayHeader(); ok {
				p.Items = make([]Message, ni)
				for i := range ni {
					if !r.fastMessage(&p.Items[i]) {
						return false
					}
				}
			}
		case "total":
			p.Total, ok = r.int()
		case "start_sequence":
			p.StartSequence, ok = r.int()
		case "end_sequence":
			p.EndSequence, ok = r.int()
		case "next_before_sequence":
			p.NextBeforeSequence, ok = r.int()
		case "has_more":
			p.HasMore, ok = r.fastBool()
		default:
			ok = r.skip()
		}
		if !ok {
			return false
		}
	}
	return r.done()
}

// fastFrame reads one frame of any kind into f (owned strings).
func fastFrame(b []byte, f *Frame) bool {
	r := reader{b: b}
	n, ok := r.mapHeader()
	if !ok {
		return false
	}
	for range n {
		k, ok := r.str()
		if !ok {
			return false
		}
		var v int64
		switch string(k) {
		case "seq":
			if v, ok = r.int(); ok && v >= 0 {
				f.Seq = uint64(v)
			} else {
				ok = false
			}
		case "protocol":
			if v, ok = r.int(); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
				f.Protocol = int(v)
			} else {
				ok = false
			}
		case "head_sequence":
			f.HeadSequence, ok = r.int()
		case "revision":
			f.Revision, ok = r.int()
		case "offset":
			f.Offset, ok = r.int()
		case "kind":
			f.Kind, ok = r.fastString()
		case "session_id":
			f.SessionID, ok = r.fastString()
		case "message_id":
			f.MessageID, ok = r.fastString()
		case "part_id":
			f.PartID, ok = r.fastString()
		case "text":
			f.Text, ok = r.fastString()
		case "code":
			f.Code, ok = r.fastString()
		case "reason":
			f.Reason, ok = r.fastString()
		case "message":
			f.Message = &Message{}
			ok = r.fastMessage(f.Message)
		case "part":
			f.Part = &Part{}
			ok = r.fastPart(f.Part)
		default:
			ok = r.skip()
		}
		if !ok {
			return false
		}
	}
	return r.done()
}
