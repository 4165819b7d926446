package api

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/synccore"
)

// wire appends the protocol's shapes as msgpack without reflection.
// msgpack/v5's reflection over the many omitempty fields of Part and Frame
// cost about 11 allocations per struct and a quarter of a page read; this
// writes the same bytes (wire_test.go compares them with msgpack.Marshal,
// and fails if a field is added to the contract types without being added
// here). Values of type any still go through msgpack/v5.
type wire struct {
	b       []byte
	scratch bytes.Buffer
	enc     *msgpack.Encoder // writes into scratch
}

func newWire() *wire {
	w := &wire{}
	w.enc = newEncoder(&w.scratch)
	return w
}

// any appends a value of the model's open fields (data, input, output,
// request, response) through msgpack/v5.
func (w *wire) any(v any) error {
	w.scratch.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.b = append(w.b, w.scratch.Bytes()...)
	return nil
}

func (w *wire) key(k string) { w.b = appendStr(w.b, k) }

func (w *wire) str(k, v string) {
	if v != "" {
		w.b = appendStr(appendStr(w.b, k), v)
	}
}

func (w *wire) int(k string, v int64) {
	if v != 0 {
		w.b = appendInt(appendStr(w.b, k), v)
	}
}

func (w *wire) anyField(k string, v any) error {
	if v == nil {
		return nil
	}
	w.key(k)
	return w.any(v)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// page appends a MessagePage.
func (w *wire) page(p *synccore.MessagePage) error {
	n := 3 // items, total, has_more
	for _, set := range [...]bool{p.StartSequence != 0, p.EndSequence != 0, p.NextBeforeSequence != 0} {
		if set {
			n++
		}
	}
	w.b = appendMapLen(w.b, n)
	w.key("items")
	if p.Items == nil {
		w.b = append(w.b, 0xc0)
	} else {
		w.b = appendArrayLen(w.b, len(p.Items))
		for i := range p.Items {
			if err := w.message(&p.Items[i]); err != nil {
				return err
			}
		}
	}
	w.key("total")
	w.b = appendInt(w.b, p.Total)
	w.int("start_sequence", p.StartSequence)
	w.int("end_sequence", p.EndSequence)
	w.int("next_before_sequence", p.NextBeforeSequence)
	w.key("has_more")
	w.b = appendBool(w.b, p.HasMore)
	return nil
}

// message appends a Message.
func (w *wire) message(m *synccore.Message) error {
	n := 8 // every field but state and turn_id is always written
	if m.State != "" {
		n++
	}
	if m.TurnID != "" {
		n++
	}
	w.b = appendMapLen(w.b, n)
	w.key("message_id")
	w.b = appendStr(w.b, m.MessageID)
	w.key("session_id")
	w.b = appendStr(w.b, m.SessionID)
	w.key("sequence")
	w.b = appendInt(w.b, m.Sequence)
	w.key("revision")
	w.b = appendInt(w.b, m.Revision)
	w.key("role")
	w.b = appendStr(w.b, string(m.Role))
	w.str("state", string(m.State))
	w.str("turn_id", m.TurnID)
	w.key("visibility")
	w.b = appendStr(w.b, string(m.Visibility))
	w.key("created_at")
	w.b = appendInt(w.b, m.CreatedAt)
	w.key("parts")
	if m.Parts == nil {
		w.b = append(w.b, 0xc0)
		return nil
	}
	w.b = appendArrayLen(w.b, len(m.Parts))
	for i := range m.Parts {
		if err := w.part(&m.Parts[i]); err != nil {
			return err
		}
	}
	return nil
}

// part appends a Part: part_id, sequence and type always, the rest when
// set, in the struct's field order.
func (w *wire) part(p *synccore.Part) error {
	n := 3
	for _, set := range [...]bool{
		p.StepID != "", p.State != "", p.Text != "", p.Tag != "", p.Context != "",
		p.URL != "", p.MediaType != "", p.Filename != "",
		p.DataType != "", p.Data != nil, p.DataID != "",
		p.ToolCallID != "", p.ToolName != "", p.Input != nil, p.Output != nil,
		p.InteractionID != "", p.Status != "", p.Request != nil, p.Response != nil,
		p.ActionID != "", p.ActionType != "", p.Title != "",
		p.Scope != "", p.Code != "", p.Message != "", p.Recoverable,
	} {
		if set {
			n++
		}
	}
	w.b = appendMapLen(w.b, n)
	w.key("part_id")
	w.b = appendStr(w.b, p.PartID)
	w.key("sequence")
	w.b = appendInt(w.b, p.Sequence)
	w.key("type")
	w.b = appendStr(w.b, string(p.Type))
	w.str("step_id", p.StepID)
	w.str("state", p.State)
	w.str("text", p.Text)
	w.str("tag", p.Tag)
	w.str("context", p.Context)
	w.str("url", p.URL)
	w.str("media_type", p.MediaType)
	w.str("filename", p.Filename)
	w.str("data_type", p.DataType)
	if err := w.anyField("data", p.Data); err != nil {
		return err
	}
	w.str("data_id", p.DataID)
	w.str("tool_call_id", p.ToolCallID)
	w.str("tool_name", p.ToolName)
	if err := w.anyField("input", p.Input); err != nil {
		return err
	}
	if err := w.anyField("output", p.Output); err != nil {
		return err
	}
	w.str("interaction_id", p.InteractionID)
	w.str("status", p.Status)
	if err := w.anyField("request", p.Request); err != nil {
		return err
	}
	if err := w.anyField("response", p.Response); err != nil {
		return err
	}
	w.str("action_id", p.ActionID)
	w.str("action_type", p.ActionType)
	w.str("title", p.Title)
	w.str("scope", p.Scope)
	w.str("code", p.Code)
	w.str("message", p.Message)
	if p.Recoverable {
		w.key("recoverable")
		w.b = appendBool(w.b, true)
	}
	return nil
}
