package model

import (
	"encoding/json"
	"strconv"
	"strings"
)

// adapter turns a provider's stream of deltas into engine events. Both
// providers share it, so text, reasoning and tool calls map the same way:
// one text or reasoning block open at a time (a change of kind closes it),
// tool calls keyed by the provider's own index, their input JSON streamed
// as tool-input-delta and parsed into a tool-call when the step ends.
type adapter struct {
	emit   func(Event) error
	open   string // EvTextStart or EvReasoningStart of the open block, "" if none
	block  string // its id
	blocks int
	calls  []*streamedCall
	byKey  map[int64]*streamedCall
	usage  map[string]any
	finish string // provider finish reason, "" until it came
}

type streamedCall struct {
	id, name string
	args     strings.Builder
}

func newAdapter(emit func(Event) error) *adapter {
	return &adapter{emit: emit, byKey: map[int64]*streamedCall{}}
}

// delta appends text to the open block of kind (EvTextStart or
// EvReasoningStart), opening one if needed.
func (a *adapter) delta(kind, text string) error {
	if text == "" {
		return nil
	}
	if a.open != kind {
		if err := a.closeBlock(); err != nil {
			return err
		}
		a.blocks++
		a.open, a.block = kind, "b"+strconv.Itoa(a.blocks)
		if err := a.emit(Event{Type: kind, BlockID: a.block}); err != nil {
			return err
		}
	}
	typ := EvTextDelta
	if kind == EvReasoningStart {
		typ = EvReasoningDelta
	}
	return a.emit(Event{Type: typ, BlockID: a.block, Delta: text})
}

func (a *adapter) closeBlock() error {
	if a.open == "" {
		return nil
	}
	typ := EvTextEnd
	if a.open == EvReasoningStart {
		typ = EvReasoningEnd
	}
	a.open = ""
	return a.emit(Event{Type: typ, BlockID: a.block})
}

// toolStart begins the tool call at key; a later start with the same key
// and a known id is a continuation some servers send, and is ignored.
func (a *adapter) toolStart(key int64, id, name string) error {
	if _, ok := a.byKey[key]; ok {
		return nil
	}
	if err := a.closeBlock(); err != nil {
		return err
	}
	if id == "" {
		id = "call_" + strconv.FormatInt(key, 10)
	}
	c := &streamedCall{id: id, name: name}
	a.byKey[key] = c
	a.calls = append(a.calls, c)
	return a.emit(Event{Type: EvToolInputStart, ToolCallID: id, ToolName: name})
}

// toolArgs appends input JSON to the tool call at key.
func (a *adapter) toolArgs(key int64, delta string) error {
	c := a.byKey[key]
	if c == nil || delta == "" {
		return nil
	}
	c.args.WriteString(delta)
	return a.emit(Event{Type: EvToolInputDelta, ToolCallID: c.id, Delta: delta})
}

// end closes the step: the open block, every tool call with its parsed
// input, the usage part, then finish. It fails with ErrNoFinish if the
// provider never said the step was over.
func (a *adapter) end() error {
	if a.finish == "" {
		return ErrNoFinish
	}
	if err := a.closeBlock(); err != nil {
		return err
	}
	for _, c := range a.calls {
		if err := a.emit(Event{Type: EvToolCall, ToolCallID: c.id, ToolName: c.name, Input: parseInput(c.args.String())}); err != nil {
			return err
		}
	}
	if a.usage != nil {
		if err := a.emit(Event{Type: EvData, DataType: DataUsage, Data: a.usage}); err != nil {
			return err
		}
	}
	reason := FinishStop
	if len(a.calls) > 0 {
		reason = FinishToolCalls
	}
	return a.emit(Event{Type: EvFinish, FinishReason: reason})
}

// parseInput decodes a tool call's arguments; empty is an empty object and
// JSON that does not parse is kept as the raw string, so the tool (not the
// turn) fails on it and the model sees why.
func parseInput(args string) any {
	if strings.TrimSpace(args) == "" {
		return map[string]any{}
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return args
	}
	return v
}
