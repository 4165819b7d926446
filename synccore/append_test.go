package synccore

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore/internal/msgp"
	"github.com/vmihailenco/msgpack/v5"
)

// sampleFrames has one frame of every kind, with big and small numbers:
// what a server's WebSocket writer sends.
func sampleFrames() []Frame {
	msg := &Message{
		MessageID: "m1", SessionID: "s1", Sequence: 3, Revision: 2, Role: RoleAgent,
		State: MessageStreaming, TurnID: "t1", Visibility: VisibilityVisible, CreatedAt: 1_764_000_000_000,
		Parts: []Part{
			{PartID: "p1", Sequence: 1, Type: PartText, StepID: "st", State: StateDone, Text: "héllo"},
			{PartID: "p2", Sequence: 2, Type: PartTool, ToolCallID: "c", ToolName: "x",
				Input: map[string]any{"b": []any{"x", 2.5, int64(1)}, "a": map[string]any{"z": 1, "y": nil}}, State: ToolRunning},
		},
	}
	return []Frame{
		{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: 70000},
		{Seq: 2, Kind: FrameMessage, Message: msg},
		{Seq: 3, Kind: FramePart, MessageID: "m1", Revision: 2, Part: &msg.Parts[0]},
		{Seq: 300, Kind: FrameDelta, MessageID: "m1", Revision: 2, PartID: "p1", Offset: 6, Text: "wörld"},
		{Seq: 1 << 33, Kind: FrameDelta, MessageID: "m1", Revision: 1 << 40, PartID: "p1", Offset: 128, Text: ""},
		{Seq: 301, Kind: FrameDelta, MessageID: strings.Repeat("m", 40), Revision: 2, PartID: "p1", Offset: 70000, Text: strings.Repeat("é", 150)},
		{Seq: 302, Kind: FrameDelta, MessageID: "m1", Revision: 2, PartID: "p1", Offset: 1 << 20, Text: strings.Repeat("x", 70000)},
		{Seq: 70000, Kind: FrameResync, Code: "slow_consumer", Reason: "queue overflow"},
		{Seq: 70001, Kind: FrameError, Code: "internal", Reason: "boom"},
	}
}

// populate sets every field of the struct v points to a non-zero value,
// by reflection, so a field added to a contract type later is set here
// too and the comparison with msgpack/v5 catches an encoder that lacks it.
func populate(t *testing.T, v any, seed int) {
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		name := rv.Type().Field(i).Name
		switch f.Kind() {
		case reflect.String:
			f.SetString(name + "-value")
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(seed*100 + i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(seed*100000 + i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Interface:
			f.Set(reflect.ValueOf([]any{name, int64(seed), 1.5, nil, map[string]any{"k": name, "a": true}}))
		case reflect.Slice, reflect.Pointer:
			// set by the caller
		default:
			t.Fatalf("populate: field %s of kind %s", name, f.Kind())
		}
	}
}

func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%s: bytes differ from msgpack/v5 at %d of %d/%d: got %x, want %x", what, i, len(got), len(want),
		got[i:min(i+24, len(got))], want[i:min(i+24, len(want))])
}

// TestAppendMatchesMarshal: the Append* entry points write exactly what
// msgpack.Marshal writes with compact ints (and sorted map keys, for the
// maps inside `any` values), so the bytes a server puts on the wire or in
// its store are those it wrote when it used msgpack/v5.
func TestAppendMatchesMarshal(t *testing.T) {
	var full Part
	populate(t, &full, 1)
	empty := Part{PartID: "p0"} // only the fields never omitted
	var msg Message
	populate(t, &msg, 2)
	msg.Parts = []Part{full, empty}
	var page MessagePage
	populate(t, &page, 3)
	page.Items = []Message{msg, {MessageID: "bare"}, {MessageID: "noparts", Parts: []Part{}}}
	var fr Frame
	populate(t, &fr, 4)
	fr.Message, fr.Part = &msg, &full
	frames := append([]Frame{fr}, sampleFrames()...)

	prefix := []byte("prefix") // appends keep what dst holds
	check := func(what string, v any, b []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !bytes.HasPrefix(b, prefix) {
			t.Fatalf("%s: dst overwritten", what)
		}
		sameBytes(t, what, b[len(prefix):], libEncode(t, v))
	}
	for _, p := range []*Part{&full, &empty, {}} {
		b, err := appendPartChecked(prefix, p)
		check("part", p, b, err)
	}
	for _, m := range []*Message{&msg, {}, {MessageID: "noparts", Parts: []Part{}}} {
		b, err := appendMessageChecked(prefix, m)
		check("message", m, b, err)
	}
	for _, p := range []*MessagePage{&page, {}, {Items: []Message{}}} {
		b, err := appendPageChecked(prefix, p)
		check("page", p, b, err)
	}
	b, err := appendFrameList(prefix, frames)
	check("frames", frames, b, err)
	b, err = appendFrameList(prefix, nil)
	check("no frames", []Frame{}, b, err)

	var back []Frame
	if err := msgpack.Unmarshal(b[len(prefix):], &back); err != nil {
		t.Fatal(err)
	}
	b, _ = appendFrameList(prefix, frames)
	if err := msgpack.Unmarshal(b[len(prefix):], &back); err != nil || len(back) != len(frames) || back[4].Text != "wörld" {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

// TestAppendFailure: a value msgpack cannot encode is a typed error, and
// dst comes back as it was.
func TestAppendFailure(t *testing.T) {
	bad := Part{PartID: "p", Sequence: 1, Type: PartData, Data: make(chan int)}
	dst := []byte("keep")
	for name, fn := range map[string]func() ([]byte, error){
		"part":    func() ([]byte, error) { return appendPartChecked(dst, &bad) },
		"message": func() ([]byte, error) { return appendMessageChecked(dst, &Message{Parts: []Part{bad}}) },
		"page": func() ([]byte, error) {
			return appendPageChecked(dst, &MessagePage{Items: []Message{{Parts: []Part{bad}}}})
		},
		"frames": func() ([]byte, error) { return appendFrameList(dst, []Frame{{Kind: FramePart, Part: &bad}}) },
	} {
		b, err := fn()
		if e, ok := err.(*Error); !ok || e.Code != CodeInternal {
			t.Fatalf("%s: err %v", name, err)
		}
		if string(b) != "keep" {
			t.Fatalf("%s: dst %q", name, b)
		}
	}
}

// TestDecodePartMatchesLibrary: decodePartBytes gives what msgpack/v5's
// reflective decoder gives, on every field, skips unknown keys, and turns
// garbage into a typed error.
func TestDecodePartMatchesLibrary(t *testing.T) {
	var full Part
	populate(t, &full, 1)
	for _, p := range []Part{full, {PartID: "p", Sequence: 1, Type: PartText}, {}} {
		body, err := appendPartChecked(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		var want Part
		if err := msgpack.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodePartBytes(body)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodePartBytes:\n got %+v\nwant %+v", got, want)
		}
		// Strings are owned: clobbering the input changes nothing.
		for i := range body {
			body[i] = 0
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatal("decodePartBytes aliases its input")
		}
	}
	body, _ := msgpack.Marshal(map[string]any{"part_id": "x", "future": map[string]any{"a": 1}, "sequence": 3})
	if got, err := decodePartBytes(body); err != nil || got.PartID != "x" || got.Sequence != 3 {
		t.Fatalf("unknown key: %+v, %v", got, err)
	}
	for _, garbage := range [][]byte{nil, {0x81, 0xc1}, {0x81}, {0xa1, 'x'}, {0x80, 0x80}} {
		if _, err := decodePartBytes(garbage); err == nil || err.(*Error).Code != CodeMalformed {
			t.Fatalf("% x: err %v", garbage, err)
		}
	}
}

// BenchmarkAppendFrames encodes a batch of 64 delta frames into a reused
// buffer, as a WebSocket writer does: no allocation.
func BenchmarkAppendFrames(b *testing.B) {
	batch := make([]Frame, 64)
	for i := range batch {
		batch[i] = Frame{Seq: uint64(1000 + i), Kind: FrameDelta, MessageID: "msg-0123456789",
			Revision: 3, PartID: "part-0123456789", Offset: int64(i * 16), Text: "lorem ipsum dolo"}
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = appendFrameList(buf[:0], batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/frame")
}

// BenchmarkDecodePart decodes a stored tool part's body.
func BenchmarkDecodePart(b *testing.B) {
	p := Part{PartID: "tool:2", Sequence: 2, Type: PartTool, StepID: "step-1", State: ToolOutputAvailable,
		ToolCallID: "call-1", ToolName: "read_file", Input: map[string]any{"path": "x.go"}, Output: map[string]any{"content": "abc"}}
	body, _ := appendPartChecked(nil, &p)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodePartBytes(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendersMatchMsgpack checks every int and length boundary of the
// primitives against msgpack/v5 with compact ints.
func TestAppendersMatchMsgpack(t *testing.T) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<63 - 1,
		-1, -32, -33, -128, -129, -32768, -32769, -1 << 31, -1<<31 - 1, -1 << 63}
	for _, n := range ints {
		buf.Reset()
		_ = enc.EncodeInt(n)
		if got := msgp.AppendInt(nil, n); !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("int %d: %x, msgpack %x", n, got, buf.Bytes())
		}
		if n >= 0 {
			buf.Reset()
			_ = enc.EncodeUint(uint64(n))
			if got := msgp.AppendUint(nil, uint64(n)); !bytes.Equal(got, buf.Bytes()) {
				t.Errorf("uint %d: %x, msgpack %x", n, got, buf.Bytes())
			}
		}
	}
	for _, n := range []int{0, 15, 16, 31, 32, 255, 256, 65535, 65536} {
		s := strings.Repeat("x", n)
		buf.Reset()
		_ = enc.EncodeString(s)
		if got := msgp.AppendString(nil, s); !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("string of %d bytes differs", n)
		}
		buf.Reset()
		_ = enc.EncodeArrayLen(n)
		if got := msgp.AppendArrayHeader(nil, n); !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("array len %d differs", n)
		}
		buf.Reset()
		_ = enc.EncodeMapLen(n)
		if got := msgp.AppendMapHeader(nil, n); !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("map len %d differs", n)
		}
	}
}

// TestFramesEventHeader: the header plus the data is the event's encoding.
func TestFramesEventHeader(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 65535, 65536} {
		data := bytes.Repeat([]byte{0x90}, n)
		got := append(appendFramesEventHeader(nil, n), data...)
		if want := encodeEvent(Event{Type: EvFrames, Data: data}); !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: %x, want %x", n, got[:min(len(got), 16)], want[:min(len(want), 16)])
		}
	}
}
