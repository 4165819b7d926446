package stream

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentsync/agentsync/server/model"
)

// Adapter turns a provider's stream of deltas into engine events. Both
// providers share it, so text, reasoning and tool calls map the same way:
// one text or reasoning block open at a time (a change of kind closes it),
// tool calls keyed by the provider's own index, their input JSON streamed
// as tool-input-delta and parsed into a tool-call when the step ends.
type Adapter struct {
	emit   func(model.Event) error
	open   string // model.EvTextStart or model.EvReasoningStart of the open block, "" if none
	block  string // its id
	blocks int
	calls  []*streamedCall
	byKey  map[int64]*streamedCall
	// Usage is the usage data part the step ends with, nil if none.
	Usage map[string]any
	// Finish is the provider's finish reason, "" until it came.
	Finish string
}

type streamedCall struct {
	id, name string
	args     strings.Builder
}

// NewAdapter is an adapter emitting to emit.
func NewAdapter(emit func(model.Event) error) *Adapter {
	return &Adapter{emit: emit, byKey: map[int64]*streamedCall{}}
}

// Delta appends text to the open block of kind (model.EvTextStart or
// model.EvReasoningStart), opening one if needed.
func (a *Adapter) Delta(kind, text string) error {
	if text == "" {
		return nil
	}
	if a.open != kind {
		if err := a.CloseBlock(); err != nil {
			return err
		}
		a.blocks++
		a.open, a.block = kind, "b"+strconv.Itoa(a.blocks)
		if err := a.emit(model.Event{Type: kind, BlockID: a.block}); err != nil {
			return err
		}
	}
	typ := model.EvTextDelta
	if kind == model.EvReasoningStart {
		typ = model.EvReasoningDelta
	}
	return a.emit(model.Event{Type: typ, BlockID: a.block, Delta: text})
}

// CloseBlock closes the open text or reasoning block, if any.
func (a *Adapter) CloseBlock() error {
	if a.open == "" {
		return nil
	}
	typ := model.EvTextEnd
	if a.open == model.EvReasoningStart {
		typ = model.EvReasoningEnd
	}
	a.open = ""
	return a.emit(model.Event{Type: typ, BlockID: a.block})
}

// ToolStart begins the tool call at key; a later start with the same key
// and a known id is a continuation some servers send, and is ignored.
func (a *Adapter) ToolStart(key int64, id, name string) error {
	if _, ok := a.byKey[key]; ok {
		return nil
	}
	if err := a.CloseBlock(); err != nil {
		return err
	}
	if id == "" {
		id = "call_" + strconv.FormatInt(key, 10)
	}
	c := &streamedCall{id: id, name: name}
	a.byKey[key] = c
	a.calls = append(a.calls, c)
	return a.emit(model.Event{Type: model.EvToolInputStart, ToolCallID: id, ToolName: name})
}

// ToolArgs appends input JSON to the tool call at key.
func (a *Adapter) ToolArgs(key int64, delta string) error {
	c := a.byKey[key]
	if c == nil || delta == "" {
		return nil
	}
	c.args.WriteString(delta)
	return a.emit(model.Event{Type: model.EvToolInputDelta, ToolCallID: c.id, Delta: delta})
}

// End closes the step: the open block, every tool call with its parsed
// input, the usage part, then finish. It fails with model.ErrNoFinish if the
// provider never said the step was over.
func (a *Adapter) End() error {
	if a.Finish == "" {
		return model.ErrNoFinish
	}
	if err := a.CloseBlock(); err != nil {
		return err
	}
	for _, c := range a.calls {
		if err := a.emit(model.Event{Type: model.EvToolCall, ToolCallID: c.id, ToolName: c.name, Input: ParseInput(c.args.String())}); err != nil {
			return err
		}
	}
	if a.Usage != nil {
		if err := a.emit(model.Event{Type: model.EvData, DataType: model.DataUsage, Data: a.Usage}); err != nil {
			return err
		}
	}
	reason := model.FinishStop
	if len(a.calls) > 0 {
		reason = model.FinishToolCalls
	}
	return a.emit(model.Event{Type: model.EvFinish, FinishReason: reason})
}

// ParseInput decodes a tool call's arguments; empty is an empty object and
// JSON that does not parse is kept as the raw string, so the tool (not the
// turn) fails on it and the model sees why.
func ParseInput(args string) any {
	if strings.TrimSpace(args) == "" {
		return map[string]any{}
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return args
	}
	return v
}
