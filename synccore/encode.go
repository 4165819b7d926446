package synccore

// encode.go is the hand-written msgpack encoder of the protocol's structs.
// It writes exactly what msgpack/v5 writes with UseCompactInts(true) and
// SetSortMapKeys(true): a map of the fields in declared order, omitempty
// fields left out when empty (an `any` field when its value is empty, as
// msgpack/v5 judges it), a nil slice as nil.

// mapw writes one struct as a map. For a struct of fewer than 16 fields
// the one-byte header is reserved and filled in at the end, so the
// omitempty fields need not be counted twice; a Part, which can have more,
// is counted first (partFields) and its header written up front. Nothing
// is ever moved, however large the values.
type mapw struct {
	b     []byte
	at    int // where the one-byte header is, -1 if written up front
	n     int // fields written
	err   error
	count int // the count written up front
}

// beginMap starts a struct of fewer than 16 fields.
func beginMap(b []byte) mapw { return mapw{b: append(b, 0), at: len(b)} }

// beginMapN starts a map of exactly n fields.
func beginMapN(b []byte, n int) mapw { return mapw{b: appendMapHeader(b, n), at: -1, count: n} }

// end fills in the header and returns the bytes.
func (w *mapw) end() ([]byte, error) {
	if w.at >= 0 {
		w.b[w.at] = 0x80 | byte(w.n)
	} else if w.n != w.count && w.err == nil {
		w.err = Errorf(CodeInternal, "encode: %d fields counted, %d written", w.count, w.n)
	}
	return w.b, w.err
}

// key writes a field name. Every name of the protocol is shorter than 32
// bytes, so its header is the one-byte fixstr (what appendString writes),
// without appendString's length switch: keys are most of a frame's work.
func (w *mapw) key(k string) {
	w.b = append(append(w.b, 0xa0|byte(len(k))), k...)
	w.n++
}

func (w *mapw) str(k, v string) { w.key(k); w.b = appendString(w.b, v) }

func (w *mapw) optStr(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *mapw) int(k string, v int64) { w.key(k); w.b = appendInt(w.b, v) }

func (w *mapw) optInt(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *mapw) optUint(k string, v uint64) {
	if v != 0 {
		w.key(k)
		w.b = appendUint(w.b, v)
	}
}

func (w *mapw) bool(k string, v bool) { w.key(k); w.b = appendBool(w.b, v) }

func (w *mapw) optBool(k string, v bool) {
	if v {
		w.bool(k, v)
	}
}

// optAny writes an `any` field unless msgpack/v5's omitempty drops it.
func (w *mapw) optAny(k string, v any) {
	if emptyValue(v) {
		return
	}
	if w.err != nil {
		w.n++ // counted all the same: the encoding failed anyway
		return
	}
	w.key(k)
	w.b, w.err = appendValue(w.b, v)
}

// sub runs a nested encoder, keeping the first error.
func (w *mapw) sub(b []byte, err error) {
	w.b = b
	if w.err == nil {
		w.err = err
	}
}

func appendEvent(b []byte, ev *Event) ([]byte, error) {
	w := beginMap(b)
	w.str("type", ev.Type)
	w.optStr("session_id", ev.SessionID)
	w.optInt("page_limit", int64(ev.PageLimit))
	w.optBool("include_internal", ev.IncludeInternal)
	if len(ev.Data) != 0 {
		w.key("data")
		w.b = appendBin(w.b, ev.Data)
	}
	w.optUint("request_id", ev.RequestID)
	if ev.Page != nil {
		w.key("page")
		w.sub(appendPage(w.b, ev.Page))
	}
	w.optStr("error", ev.Error)
	w.optInt("jitter", ev.Jitter)
	w.optUint("timer_id", ev.TimerID)
	return w.end()
}

// Frame keys with their fixstr headers, written in one append: frames are
// the hot path of a server's WebSocket writer (BenchmarkAppendFrames).
const (
	keySeq          = "\xa3seq"
	keyKind         = "\xa4kind"
	keyProtocol     = "\xa8protocol"
	keySessionID    = "\xaasession_id"
	keyHeadSequence = "\xadhead_sequence"
	keyMessage      = "\xa7message"
	keyMessageID    = "\xaamessage_id"
	keyRevision     = "\xa8revision"
	keyPart         = "\xa4part"
	keyPartID       = "\xa7part_id"
	keyOffset       = "\xa6offset"
	keyText         = "\xa4text"
	keyCode         = "\xa4code"
	keyReason       = "\xa6reason"
)

// appendFrame writes a frame with its keys' headers pre-encoded and the
// map's one-byte header filled in at the end, keeping the buffer in a
// local (not a mapw): frames are the hot path of a server's WebSocket
// writer, ~40 ns a delta frame (BenchmarkAppendFrames).
func appendFrame(b []byte, f *Frame) ([]byte, error) {
	at := len(b)
	b = append(b, 0)
	n := 2 // seq and kind are never omitted
	b = appendUint(append(b, keySeq...), f.Seq)
	b = appendString(append(b, keyKind...), f.Kind)
	b = intField(b, &n, keyProtocol, int64(f.Protocol))
	b = strField(b, &n, keySessionID, f.SessionID)
	b = intField(b, &n, keyHeadSequence, f.HeadSequence)
	var err error
	if f.Message != nil {
		n++
		if b, err = appendMessage(append(b, keyMessage...), f.Message); err != nil {
			return b, err
		}
	}
	b = strField(b, &n, keyMessageID, f.MessageID)
	b = intField(b, &n, keyRevision, f.Revision)
	if f.Part != nil {
		n++
		if b, err = appendPart(append(b, keyPart...), f.Part); err != nil {
			return b, err
		}
	}
	b = strField(b, &n, keyPartID, f.PartID)
	b = intField(b, &n, keyOffset, f.Offset)
	b = strField(b, &n, keyText, f.Text)
	b = strField(b, &n, keyCode, f.Code)
	b = strField(b, &n, keyReason, f.Reason)
	b[at] = 0x80 | byte(n)
	return b, nil
}

// strField writes a non-empty string under a key given with its header.
func strField(b []byte, n *int, k, v string) []byte {
	if v == "" {
		return b
	}
	*n++
	return appendString(append(b, k...), v)
}

// intField writes a non-zero int under a key given with its header.
func intField(b []byte, n *int, k string, v int64) []byte {
	if v == 0 {
		return b
	}
	*n++
	return appendInt(append(b, k...), v)
}

func appendPage(b []byte, p *MessagePage) ([]byte, error) {
	w := beginMap(b)
	w.key("items")
	w.sub(appendMessages(w.b, p.Items))
	w.int("total", p.Total)
	w.optInt("start_sequence", p.StartSequence)
	w.optInt("end_sequence", p.EndSequence)
	w.optInt("next_before_sequence", p.NextBeforeSequence)
	w.bool("has_more", p.HasMore)
	return w.end()
}

func appendMessages(b []byte, ms []Message) ([]byte, error) {
	if ms == nil {
		return appendNil(b), nil
	}
	b = appendArrayHeader(b, len(ms))
	var err error
	for i := range ms {
		if b, err = appendMessage(b, &ms[i]); err != nil {
			return b, err
		}
	}
	return b, nil
}

func appendMessage(b []byte, m *Message) ([]byte, error) {
	w := beginMap(b)
	w.str("message_id", m.MessageID)
	w.str("session_id", m.SessionID)
	w.int("sequence", m.Sequence)
	w.int("revision", m.Revision)
	w.str("role", string(m.Role))
	w.optStr("state", string(m.State))
	w.optStr("turn_id", m.TurnID)
	w.str("visibility", string(m.Visibility))
	w.int("created_at", m.CreatedAt)
	w.key("parts")
	if m.Parts == nil {
		w.b = appendNil(w.b)
	} else {
		w.b = appendArrayHeader(w.b, len(m.Parts))
		for i := range m.Parts {
			w.sub(appendPart(w.b, &m.Parts[i]))
		}
	}
	return w.end()
}

// partFields counts the fields appendPart writes.
func partFields(p *Part) int {
	n := 3
	for _, s := range [...]string{p.StepID, p.State, p.Text, p.Tag, p.Context, p.URL, p.MediaType,
		p.Filename, p.DataType, p.DataID, p.ToolCallID, p.ToolName, p.InteractionID, p.Status,
		p.ActionID, p.ActionType, p.Title, p.Scope, p.Code, p.Message} {
		if s != "" {
			n++
		}
	}
	for _, v := range [...]any{p.Data, p.Input, p.Output, p.Request, p.Response} {
		if !emptyValue(v) {
			n++
		}
	}
	if p.Recoverable {
		n++
	}
	return n
}

func appendPart(b []byte, p *Part) ([]byte, error) {
	w := beginMapN(b, partFields(p))
	w.str("part_id", p.PartID)
	w.int("sequence", p.Sequence)
	w.str("type", string(p.Type))
	w.optStr("step_id", p.StepID)
	w.optStr("state", p.State)
	w.optStr("text", p.Text)
	w.optStr("tag", p.Tag)
	w.optStr("context", p.Context)
	w.optStr("url", p.URL)
	w.optStr("media_type", p.MediaType)
	w.optStr("filename", p.Filename)
	w.optStr("data_type", p.DataType)
	w.optAny("data", p.Data)
	w.optStr("data_id", p.DataID)
	w.optStr("tool_call_id", p.ToolCallID)
	w.optStr("tool_name", p.ToolName)
	w.optAny("input", p.Input)
	w.optAny("output", p.Output)
	w.optStr("interaction_id", p.InteractionID)
	w.optStr("status", p.Status)
	w.optAny("request", p.Request)
	w.optAny("response", p.Response)
	w.optStr("action_id", p.ActionID)
	w.optStr("action_type", p.ActionType)
	w.optStr("title", p.Title)
	w.optStr("scope", p.Scope)
	w.optStr("code", p.Code)
	w.optStr("message", p.Message)
	w.optBool("recoverable", p.Recoverable)
	return w.end()
}

func appendView(b []byte, v *View) ([]byte, error) {
	w := beginMap(b)
	w.str("session_id", v.SessionID)
	w.str("status", v.Status)
	w.key("messages")
	w.sub(appendMessages(w.b, v.Messages))
	w.int("total", v.Total)
	w.bool("has_more_older", v.HasMoreOlder)
	w.optInt("next_before_sequence", v.NextBeforeSequence)
	w.bool("loading_older", v.LoadingOlder)
	w.bool("include_internal", v.IncludeInternal)
	w.str("digest", v.Digest)
	return w.end()
}

// messageSize estimates the encoded size of m, so an encoder allocates its
// buffer once instead of growing it through every doubling (a streamed
// answer is often hundreds of KB of text).
func messageSize(m *Message) int {
	n := 160
	for i := range m.Parts {
		p := &m.Parts[i]
		n += 96 + len(p.Text) + len(p.Context) + len(p.URL) + len(p.Message)
		for _, v := range [...]any{p.Data, p.Input, p.Output, p.Request, p.Response} {
			if v != nil {
				n += 64
			}
		}
	}
	return n
}

func messagesSize(ms []Message) int {
	n := 64
	for i := range ms {
		n += messageSize(&ms[i])
	}
	return n
}
