package synccore

import (
	"bytes"
	"math"
	"sort"
)

// digest.go is the canonical encoding behind DigestMessages. Two hosts, or
// a client and the server, holding the same logical messages get the same
// bytes whatever Go types their `any` values arrived as: every integer is
// written in its smallest form, an integral float as that integer, maps
// with their keys sorted by the keys' canonical bytes, and anything else is
// first reduced to plain values through msgpack.

// DigestMessages is the hex SHA-256 of the canonical msgpack encoding of
// msgs (an array of messages, each a map of its fields in declared order,
// empty optional fields left out). Servers use it to compare a client's
// view with their snapshot.
func DigestMessages(msgs []Message) string {
	h := newDigestHash()
	var buf []byte
	buf = appendArrayHeader(buf, len(msgs))
	for i := range msgs {
		buf = appendCanonMessage(buf, &msgs[i])
		if len(buf) > 64<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hexString(h.Sum(nil))
}

// appendCanonMessage appends a message with the same keys and omissions as
// its msgpack struct tags.
func appendCanonMessage(b []byte, m *Message) []byte {
	n := 8
	if m.State != "" {
		n++
	}
	if m.TurnID != "" {
		n++
	}
	b = appendMapHeader(b, n)
	b = appendKV(b, "message_id", m.MessageID)
	b = appendKV(b, "session_id", m.SessionID)
	b = appendString(b, "sequence")
	b = appendInt(b, m.Sequence)
	b = appendString(b, "revision")
	b = appendInt(b, m.Revision)
	b = appendKV(b, "role", string(m.Role))
	if m.State != "" {
		b = appendKV(b, "state", string(m.State))
	}
	if m.TurnID != "" {
		b = appendKV(b, "turn_id", m.TurnID)
	}
	b = appendKV(b, "visibility", string(m.Visibility))
	b = appendString(b, "created_at")
	b = appendInt(b, m.CreatedAt)
	b = appendString(b, "parts")
	b = appendArrayHeader(b, len(m.Parts))
	for i := range m.Parts {
		b = appendCanonPart(b, &m.Parts[i])
	}
	return b
}

func appendKV(b []byte, k, v string) []byte {
	return appendString(appendString(b, k), v)
}

// appendCanonPart appends a part: part_id, sequence and type always, every
// other field in declared order when it is not empty.
func appendCanonPart(b []byte, p *Part) []byte {
	strs := [...]struct{ k, v string }{
		{"step_id", p.StepID}, {"state", p.State}, {"text", p.Text}, {"tag", p.Tag},
		{"context", p.Context}, {"url", p.URL}, {"media_type", p.MediaType},
		{"filename", p.Filename}, {"data_type", p.DataType},
	}
	n := 3
	for _, s := range strs {
		if s.v != "" {
			n++
		}
	}
	rest := [...]struct{ k, v string }{
		{"data_id", p.DataID}, {"tool_call_id", p.ToolCallID}, {"tool_name", p.ToolName},
	}
	rest2 := [...]struct{ k, v string }{
		{"interaction_id", p.InteractionID}, {"status", p.Status},
	}
	rest3 := [...]struct{ k, v string }{
		{"action_id", p.ActionID}, {"action_type", p.ActionType}, {"title", p.Title},
		{"scope", p.Scope}, {"code", p.Code}, {"message", p.Message},
	}
	for _, s := range rest {
		if s.v != "" {
			n++
		}
	}
	for _, s := range rest2 {
		if s.v != "" {
			n++
		}
	}
	for _, s := range rest3 {
		if s.v != "" {
			n++
		}
	}
	for _, v := range [...]any{p.Data, p.Input, p.Output, p.Request, p.Response} {
		if !isEmptyAny(v) {
			n++
		}
	}
	if p.Recoverable {
		n++
	}
	b = appendMapHeader(b, n)
	b = appendKV(b, "part_id", p.PartID)
	b = appendString(b, "sequence")
	b = appendInt(b, p.Sequence)
	b = appendKV(b, "type", string(p.Type))
	for _, s := range strs {
		if s.v != "" {
			b = appendKV(b, s.k, s.v)
		}
	}
	b = appendAnyKV(b, "data", p.Data)
	for _, s := range rest {
		if s.v != "" {
			b = appendKV(b, s.k, s.v)
		}
	}
	b = appendAnyKV(b, "input", p.Input)
	b = appendAnyKV(b, "output", p.Output)
	for _, s := range rest2 {
		if s.v != "" {
			b = appendKV(b, s.k, s.v)
		}
	}
	b = appendAnyKV(b, "request", p.Request)
	b = appendAnyKV(b, "response", p.Response)
	for _, s := range rest3 {
		if s.v != "" {
			b = appendKV(b, s.k, s.v)
		}
	}
	if p.Recoverable {
		b = appendString(b, "recoverable")
		b = appendBool(b, true)
	}
	return b
}

func appendAnyKV(b []byte, k string, v any) []byte {
	if isEmptyAny(v) {
		return b
	}
	return appendCanonAny(appendString(b, k), v)
}

// isEmptyAny mirrors msgpack's omitempty for an interface field: only a nil
// interface is empty.
func isEmptyAny(v any) bool { return v == nil }

// appendCanonAny appends v in canonical form.
func appendCanonAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return appendNil(b)
	case bool:
		return appendBool(b, x)
	case string:
		return appendString(b, x)
	case []byte:
		return appendBin(b, x)
	case int:
		return appendInt(b, int64(x))
	case int8:
		return appendInt(b, int64(x))
	case int16:
		return appendInt(b, int64(x))
	case int32:
		return appendInt(b, int64(x))
	case int64:
		return appendInt(b, x)
	case uint:
		return appendUint(b, uint64(x))
	case uint8:
		return appendUint(b, uint64(x))
	case uint16:
		return appendUint(b, uint64(x))
	case uint32:
		return appendUint(b, uint64(x))
	case uint64:
		return appendUint(b, x)
	case float32:
		return appendCanonFloat(b, float64(x))
	case float64:
		return appendCanonFloat(b, x)
	case []any:
		b = appendArrayHeader(b, len(x))
		for _, e := range x {
			b = appendCanonAny(b, e)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Map order must never leak: sort first. Not sort.Strings, which would
		// link slices.Sort's generic code into the wasm module (+21 KB).
		//lint:ignore S1032 see above
		sort.Sort(sort.StringSlice(keys))
		b = appendMapHeader(b, len(keys))
		for _, k := range keys {
			b = appendCanonAny(appendString(b, k), x[k])
		}
		return b
	case map[any]any:
		type kv struct {
			k []byte
			v any
		}
		kvs := make([]kv, 0, len(x))
		for k, e := range x {
			kvs = append(kvs, kv{appendCanonAny(nil, k), e})
		}
		sort.Slice(kvs, func(i, j int) bool { return bytes.Compare(kvs[i].k, kvs[j].k) < 0 })
		b = appendMapHeader(b, len(kvs))
		for _, e := range kvs {
			b = append(b, e.k...)
			b = appendCanonAny(b, e.v)
		}
		return b
	}
	return appendCanonAny(b, plainValue(v))
}

// appendCanonFloat writes an integral float as the integer it equals, so a
// value that came through JSON (float64) digests like one that came through
// msgpack (an int).
func appendCanonFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && f >= -(1<<63) && f < (1<<63) && !math.IsInf(f, 0) {
		return appendInt(b, int64(f))
	}
	if f == math.Trunc(f) && f >= 0 && f < (1<<64) {
		return appendUint(b, uint64(f))
	}
	return appendFloat64(b, f)
}

// plainValue reduces any other Go value (a struct, a typed slice or map, a
// pointer) to nil, bool, numbers, strings, []any and maps by a msgpack
// round trip; a value msgpack cannot encode digests as its type name.
func plainValue(v any) any {
	if isNilPointer(v) {
		return nil
	}
	b, err := appendValue(nil, v)
	if err != nil {
		return "!unencodable " + typeName(v)
	}
	var out any
	if err := decodeWith(b, "value", func(d *decoder) { out = d.anyValue(0) }); err != nil {
		return "!undecodable " + typeName(v)
	}
	switch out.(type) {
	case nil, bool, string, []byte, []any, map[string]any, map[any]any, float32, float64,
		int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return out
	}
	return "!unplain " + typeName(out)
}

// hexString is lower-case hex (encoding/hex would link fmt into the module).
func hexString(p []byte) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*len(p))
	for i, c := range p {
		b[2*i], b[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(b)
}
