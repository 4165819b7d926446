package synccore

import (
	"math"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fastmsg_test.go: the reflection-free readers give exactly what the
// generic msgpack/v5 decoder gives, or step aside.

func sampleMessages() []Message {
	anyValues := map[string]any{
		"i": -5, "u8": uint8(200), "u16": uint16(60000), "u32": uint32(1 << 30), "u64": uint64(1 << 40),
		"i16": int16(-300), "i32": int32(-70000), "i64": int64(-1 << 40), "f32": float32(1.5), "f64": math.Pi,
		"s": "str", "b": []byte{1, 2}, "nil": nil, "t": true, "arr": []any{1, "x", []any{}}, "m": map[string]any{},
	}
	return []Message{
		userMsg("u1", 1, "héllo"),
		agentMsg("a2", 2, 7, MessageDone,
			Part{PartID: "t", Sequence: 1, Type: PartTool, State: ToolOutputAvailable, ToolCallID: "c", ToolName: "n", Input: anyValues, Output: []any{anyValues}},
			Part{PartID: "i", Sequence: 2, Type: PartInteraction, Status: InteractionResolved, InteractionID: "x",
				Request: map[string]any{"kind": "approval"}, Response: map[string]any{"approved": true}},
			Part{PartID: "e", Sequence: 3, Type: PartError, Scope: ErrorScopeTurn, Code: "c", Message: "m", Recoverable: true},
			Part{PartID: "d", Sequence: 4, Type: PartData, DataType: "chart", Data: "x", DataID: "d1"},
			Part{PartID: "f", Sequence: 5, Type: PartFile, URL: "u", MediaType: "image/png", Filename: "a.png"},
			Part{PartID: "a", Sequence: 6, Type: PartAction, State: ActionPending, ActionID: "a", ActionType: "stop", Title: "Stop"},
		),
	}
}

func TestFastPageMatchesGeneric(t *testing.T) {
	p := MessagePage{Items: sampleMessages(), Total: 9, StartSequence: 1, EndSequence: 2, NextBeforeSequence: 1, HasMore: true}
	b := EncodePage(p)
	checkFastPage(t, b, true)
	// Odd but valid encodings: unknown keys, wide ints, nil `any`.
	odd, _ := msgpack.Marshal(map[string]any{"items": []any{map[string]any{"message_id": "m", "sequence": uint64(3), "zz": []any{1},
		"parts": []any{map[string]any{"part_id": "p", "sequence": int64(1), "type": "data", "data": nil, "extra": map[string]any{"q": 1}}}}},
		"total": int32(5), "has_more": false, "future": "x"})
	checkFastPage(t, odd, true)
	// A struct encoded as an array: not read fast, the generic decoder's job.
	arr, _ := msgpack.Marshal([]any{[]any{}, 1})
	checkFastPage(t, arr, false)
}

func checkFastPage(t *testing.T, b []byte, wantFast bool) {
	t.Helper()
	var fast, generic MessagePage
	ok := fastPage(b, &fast)
	if ok != wantFast {
		t.Fatalf("fast path taken: %v, want %v", ok, wantFast)
	}
	if err := msgpack.Unmarshal(b, &generic); err != nil {
		if ok {
			t.Fatalf("fast path read what the generic decoder refuses: %v", err)
		}
		return
	}
	if ok && !reflect.DeepEqual(fast, generic) {
		t.Fatalf("fast and generic differ:\n%#v\n%#v", fast, generic)
	}
}

func TestFastFrameMatchesGeneric(t *testing.T) {
	m := sampleMessages()[1]
	for _, f := range []Frame{
		{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s", HeadSequence: 300},
		{Seq: 2, Kind: FrameMessage, Message: &m},
		{Seq: 3, Kind: FramePart, MessageID: "m", Revision: 2, Part: &m.Parts[0]},
		{Seq: 4, Kind: FrameResync, Code: "slow_consumer", Reason: "r"},
	} {
		b := EncodeFrames([]Frame{f})[1:]
		var fast, generic Frame
		if !fastFrame(b, &fast) {
			t.Fatalf("%s: fast path not taken", f.Kind)
		}
		if err := msgpack.Unmarshal(b, &generic); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, generic) {
			t.Fatalf("%s: fast %#v\n generic %#v", f.Kind, fast, generic)
		}
	}
}

// FuzzFastDecoders: whenever the fast readers accept bytes that the generic
// decoder also accepts, both give the same value.
func FuzzFastDecoders(f *testing.F) {
	f.Add(EncodePage(MessagePage{Items: sampleMessages(), Total: 2}))
	m := sampleMessages()[1]
	f.Add(EncodeFrames([]Frame{{Seq: 2, Kind: FrameMessage, Message: &m}})[1:])
	f.Add(EncodeEvent(Event{Type: EvPageFailed, RequestID: 3, Error: "boom", Jitter: 999}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !nestingOK(b) {
			return
		}
		var fp, gp MessagePage
		if fastPage(b, &fp) && msgpack.Unmarshal(b, &gp) == nil && !reflect.DeepEqual(fp, gp) {
			t.Fatalf("page differs:\n%#v\n%#v", fp, gp)
		}
		var fe, ge Event
		if decodeEventFast(b, &fe) && msgpack.Unmarshal(b, &ge) == nil && !reflect.DeepEqual(fe, ge) {
			t.Fatalf("event differs:\n%#v\n%#v", fe, ge)
		}
		var ff, gf Frame
		if fastFrame(b, &ff) && msgpack.Unmarshal(b, &gf) == nil && !reflect.DeepEqual(ff, gf) {
			t.Fatalf("frame differs:\n%#v\n%#v", ff, gf)
		}
	})
}

func TestFastEventMatchesGeneric(t *testing.T) {
	for _, ev := range []Event{
		{Type: EvStart, SessionID: "s1", PageLimit: 30, IncludeInternal: true},
		{Type: EvFrames, Data: []byte{0x91, 0x80}},
		{Type: EvPage, RequestID: 1 << 33, Data: []byte{1, 2, 3}},
		{Type: EvPageFailed, RequestID: 3, Error: "boom", Jitter: 999},
		{Type: EvTimerFired, TimerID: 77},
		{Type: "future_event"},
	} {
		b := EncodeEvent(ev)
		var fast, generic Event
		if !decodeEventFast(b, &fast) {
			t.Fatalf("%s: fast path not taken", ev.Type)
		}
		if err := msgpack.Unmarshal(b, &generic); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, generic) {
			t.Fatalf("%s: fast %#v\n generic %#v", ev.Type, fast, generic)
		}
	}
	var ev Event
	if decodeEventFast(EncodeEvent(Event{Type: EvPage, RequestID: 1, Page: &MessagePage{}}), &ev) {
		t.Fatal("a decoded page must go to the generic decoder")
	}
}
