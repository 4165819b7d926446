package synccore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

func libEncode(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOutputMatchesLibrary: the hand-written Output encoder writes exactly
// what msgpack/v5 writes for the same value.
func TestOutputMatchesLibrary(t *testing.T) {
	outs := []Output{
		{Commands: []Command{}},
		{Commands: []Command{{Type: CmdRender, MessageIDs: []string{"m1", "m2"}}}},
		{Commands: []Command{
			{Type: CmdCloseSubscription, Reason: "gap"},
			{Type: CmdStatus, Status: StatusBackoff, Reason: "gap"},
			{Type: CmdSetTimer, TimerID: 300, DelayMs: 70000},
			{Type: CmdFetchPage, SessionID: "s", RequestID: 1 << 40, Limit: 200, BeforeSequence: 65536, IncludeInternal: true},
			{Type: CmdRender, Reset: true},
			{Type: CmdOpenSubscription, SessionID: string(bytes.Repeat([]byte("x"), 70000))},
		}},
		{Commands: []Command{}, Error: &Error{Code: CodeMalformed, Message: "bad"}},
		{Commands: []Command{
			{Type: CmdStatus, Status: StatusBackoff, Reason: string(bytes.Repeat([]byte("r"), 40))},
			{Type: CmdStatus, Status: StatusBackoff, Reason: string(bytes.Repeat([]byte("r"), 300))},
			{Type: CmdRender, MessageIDs: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q"}},
			{Type: CmdSetTimer, TimerID: 1<<32 + 1, DelayMs: -5},
		}, Error: &Error{Code: CodeInternal, Message: string(bytes.Repeat([]byte("m"), 70000))}},
	}
	for i, o := range outs {
		if got, want := encodeOutput(o), libEncode(t, &o); !bytes.Equal(got, want) {
			t.Fatalf("output %d: hand %x\n lib %x", i, got, want)
		}
	}
}

// TestFastDeltaMatchesGeneric: a delta read in place means what the generic
// decoder reads, for canonical frames and for odd but valid encodings.
func TestFastDeltaMatchesGeneric(t *testing.T) {
	frames := [][]byte{
		encodeFrames([]Frame{{Seq: 2, Kind: FrameDelta, MessageID: "m", Revision: 3, PartID: "p", Offset: 300, Text: "héllo"}}),
		// unknown key, wide ints, keys in another order
		mustLib(t, []any{map[string]any{"text": "x", "zz": []any{1, map[string]any{"a": nil}}, "offset": uint64(7), "part_id": "p",
			"revision": int64(9), "message_id": "m", "kind": "delta", "seq": uint32(70000)}}),
		// a nil text falls back to the generic decoder
		mustLib(t, []any{map[string]any{"seq": 2, "kind": "delta", "message_id": "m", "revision": 1, "part_id": "p", "offset": 0, "text": nil}}),
		// a message frame
		encodeFrames([]Frame{{Seq: 4, Kind: FrameMessage, Message: ptr(userMsg("m1", 1, "x"))}}),
	}
	for i, b := range frames {
		r := msgp.Reader{Buf: b}
		if _, ok := r.ArrayHeader(); !ok {
			t.Fatal("array")
		}
		var rf rawFrame
		if err := nextFrame(&r, &rf); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		generic, err := decodeFrames(b)
		if err != nil {
			t.Fatalf("frame %d: generic: %v", i, err)
		}
		g := generic[0]
		if g.Kind == FrameDelta && (g.Kind == "" || g.Message != nil) {
			t.Fatal("unexpected")
		}
		if got := rf.frame(); got.Seq != g.Seq || got.Kind != g.Kind || got.MessageID != g.MessageID ||
			got.Revision != g.Revision || got.PartID != g.PartID || got.Offset != g.Offset || got.Text != g.Text {
			t.Fatalf("frame %d: fast %+v, generic %+v", i, got, g)
		}
	}
}

func mustLib(t *testing.T, v any) []byte {
	t.Helper()
	return libEncode(t, v)
}

func TestDecodeErrorsAreTyped(t *testing.T) {
	deep := bytes.Repeat([]byte{0x91}, 100000)
	deep = append(deep, 0xc0)
	inputs := [][]byte{nil, {0xc1}, {0x91}, {0x90}, {0x91, 0x80}, {0x91, 0x81, 0xa3, 's', 'e', 'q', 0xa1, 'x'},
		{0xdd, 0xff, 0xff, 0xff, 0xff}, deep, append([]byte{0x91}, deep...)}
	for i, b := range inputs {
		frames, err := decodeFrames(b)
		if err == nil {
			err = validateFrame(&frames[0]) // a zero frame: shape fine, meaning refused
		}
		var e *Error
		if !errors.As(err, &e) || (e.Code != CodeMalformed && e.Code != CodeUnknownFrame) {
			t.Fatalf("input %d: %v", i, err)
		}
		// msgpack/v5 also reads a struct from an array, so [] is a zero
		// event (refused later as unknown_event); errors must be typed.
		if _, err := decodeEvent(b); err != nil && code(err) != CodeMalformed {
			t.Fatalf("event %d: %v", i, err)
		}
		if _, err := decodePage(b); err != nil && code(err) != CodeMalformed {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	if _, err := decodeFrames(encodeFrames([]Frame{{Seq: 1, Kind: "x"}})); err != nil {
		t.Fatalf("decodeFrames checks shape only: %v", err)
	}
	f := Frame{Seq: 1, Kind: "x"}
	if code(validateFrame(&f)) != CodeUnknownFrame {
		t.Fatal("unknown kind not refused")
	}
}

func TestRoundTrips(t *testing.T) {
	m := agentMsg("m2", 2, 4, MessageStreaming, textPart("p1", 1, StateDone, "x"),
		Part{PartID: "t", Sequence: 2, Type: PartTool, State: ToolRunning, ToolCallID: "c", ToolName: "sh",
			Input: map[string]any{"cmd": "ls", "n": int8(3)}})
	frames := []Frame{{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: 9}, {Seq: 2, Kind: FrameMessage, Message: &m}}
	back, err := decodeFrames(encodeFrames(frames))
	if err != nil || len(back) != 2 || digestMessages([]Message{*back[1].Message}) != digestMessages([]Message{m}) {
		t.Fatalf("frames: %v", err)
	}
	p := MessagePage{Items: []Message{m}, Total: 9, StartSequence: 2, EndSequence: 2, NextBeforeSequence: 2, HasMore: true}
	pb, err := decodePage(encodePage(p))
	if err != nil || pb.Total != 9 || !pb.HasMore || len(pb.Items) != 1 {
		t.Fatalf("page: %+v %v", pb, err)
	}
	ev := Event{Type: EvStart, SessionID: "s1", PageLimit: 20, IncludeInternal: true}
	if eb, err := decodeEvent(encodeEvent(ev)); err != nil || eb.SessionID != "s1" || eb.PageLimit != 20 {
		t.Fatalf("event: %+v %v", eb, err)
	}
}

// TestDigestNormalises: the same logical value digests the same whatever Go
// types carry it.
func TestDigestNormalises(t *testing.T) {
	type input struct {
		Path string `msgpack:"path"`
		N    int    `msgpack:"n"`
	}
	withInput := func(v any) string {
		m := agentMsg("m", 1, 1, MessageStreaming, Part{PartID: "t", Sequence: 1, Type: PartTool, State: ToolRunning,
			ToolCallID: "c", ToolName: "sh", Input: v})
		return digestMessages([]Message{m})
	}
	same := []any{
		map[string]any{"path": "a", "n": int8(3)},
		map[string]any{"n": float64(3), "path": "a"},
		map[string]any{"n": uint16(3), "path": "a"},
		map[any]any{"n": int64(3), "path": "a"},
		input{Path: "a", N: 3},
		&input{Path: "a", N: 3},
	}
	want := withInput(same[0])
	for i, v := range same {
		if got := withInput(v); got != want {
			t.Fatalf("value %d (%T) digests differently", i, v)
		}
	}
	if withInput(map[string]any{"path": "a", "n": 3.5}) == want {
		t.Fatal("3.5 digests like 3")
	}
	if digestMessages(nil) != digestMessages([]Message{}) {
		t.Fatal("nil and empty differ")
	}
}
