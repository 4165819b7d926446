package api

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/synccore"
)

// sampleFrames has one frame of every kind, with big and small numbers.
func sampleFrames() []synccore.Frame {
	msg := &synccore.Message{
		MessageID: "m1", SessionID: "s1", Sequence: 3, Revision: 2, Role: synccore.RoleAgent,
		State: synccore.MessageStreaming, TurnID: "t1", Visibility: synccore.VisibilityVisible, CreatedAt: 1_764_000_000_000,
		Parts: []synccore.Part{
			{PartID: "p1", Sequence: 1, Type: synccore.PartText, StepID: "st", State: synccore.StateDone, Text: "héllo"},
			{PartID: "p2", Sequence: 2, Type: synccore.PartTool, ToolCallID: "c", ToolName: "x",
				// One key: msgpack writes maps in Go's random order.
				Input: map[string]any{"b": []any{"x", 2.5, int64(1)}}, State: synccore.ToolRunning},
		},
	}
	return []synccore.Frame{
		{Seq: 1, Kind: synccore.FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: 70000},
		{Seq: 2, Kind: synccore.FrameMessage, Message: msg},
		{Seq: 3, Kind: synccore.FramePart, MessageID: "m1", Revision: 2, Part: &msg.Parts[0]},
		{Seq: 300, Kind: synccore.FrameDelta, MessageID: "m1", Revision: 2, PartID: "p1", Offset: 6, Text: "wörld"},
		{Seq: 1 << 33, Kind: synccore.FrameDelta, MessageID: "m1", Revision: 1 << 40, PartID: "p1", Offset: 128, Text: ""},
		{Seq: 301, Kind: synccore.FrameDelta, MessageID: strings.Repeat("m", 40), Revision: 2, PartID: "p1", Offset: 70000, Text: strings.Repeat("é", 150)},
		{Seq: 302, Kind: synccore.FrameDelta, MessageID: "m1", Revision: 2, PartID: "p1", Offset: 1 << 20, Text: strings.Repeat("x", 70000)},
		{Seq: 70000, Kind: synccore.FrameResync, Code: "slow_consumer", Reason: "queue overflow"},
		{Seq: 70001, Kind: synccore.FrameError, Code: "internal", Reason: "boom"},
	}
}

// TestFrameEncoderMatchesReflection: the hand-written envelope produces
// exactly msgpack/v5's bytes (compact ints), so clients see no difference.
func TestFrameEncoderMatchesReflection(t *testing.T) {
	frames := sampleFrames()
	var want bytes.Buffer
	enc := newEncoder(&want)
	if err := enc.Encode(frames); err != nil {
		t.Fatal(err)
	}
	got, err := newFrameEncoder().encode(frames)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		i := 0
		for i < len(got) && i < want.Len() && got[i] == want.Bytes()[i] {
			i++
		}
		t.Fatalf("frame bytes differ from msgpack.Marshal at byte %d of %d/%d: got %x, want %x",
			i, len(got), want.Len(), got[i:min(i+32, len(got))], want.Bytes()[i:min(i+32, want.Len())])
	}
	var back []synccore.Frame
	if err := msgpack.Unmarshal(got, &back); err != nil || len(back) != len(frames) || back[3].Text != "wörld" {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	// The buffer is reused: a second, smaller batch is not polluted.
	fe := newFrameEncoder()
	_, _ = fe.encode(frames)
	one, _ := fe.encode(frames[:1])
	var hello []synccore.Frame
	if err := msgpack.Unmarshal(one, &hello); err != nil || len(hello) != 1 || hello[0].HeadSequence != 70000 {
		t.Fatalf("reused encoder: %v %+v", err, hello)
	}
}

// TestFrameEncoderError: a frame that cannot be encoded is a typed error
// naming the frame, and the encoder stays usable.
func TestFrameEncoderError(t *testing.T) {
	fe := newFrameEncoder()
	bad := synccore.Part{PartID: "p", Sequence: 1, Type: synccore.PartData, Data: make(chan int)}
	_, err := fe.encode([]synccore.Frame{{Seq: 9, Kind: synccore.FramePart, MessageID: "m", Revision: 1, Part: &bad}})
	var se *synccore.Error
	if !errors.As(err, &se) || se.Code != synccore.CodeInternal || !strings.Contains(se.Message, "frame 9 (part)") {
		t.Fatalf("err %v", err)
	}
	frames := sampleFrames()
	got, err := fe.encode(frames)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := newEncoder(&want).Encode(frames); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("encoder unusable after an error")
	}
}

// BenchmarkFrameEncoder compares the WebSocket writer's encoder with
// msgpack/v5's reflection, per frame of a batch of 64 deltas.
func BenchmarkFrameEncoder(b *testing.B) {
	batch := make([]synccore.Frame, 64)
	for i := range batch {
		batch[i] = synccore.Frame{Seq: uint64(1000 + i), Kind: synccore.FrameDelta, MessageID: "msg-0123456789",
			Revision: 3, PartID: "part-0123456789", Offset: int64(i * 16), Text: "lorem ipsum dolo"}
	}
	b.Run("reflection", func(b *testing.B) {
		var buf bytes.Buffer
		enc := newEncoder(&buf)
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(batch)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/frame")
	})
	b.Run("envelope", func(b *testing.B) {
		fe := newFrameEncoder()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = fe.encode(batch)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/frame")
	})
}
