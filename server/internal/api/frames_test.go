package api

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/server/internal/fanout"
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

// TestEncodeSharedMatchesEncode: a batch whose frames come (some, all or
// none) from encodings shared with other subscribers, each with its own
// seq spliced in, is byte for byte the batch encode writes, at seqs of
// every width; and the shared encoding is made once.
func TestEncodeSharedMatchesEncode(t *testing.T) {
	base := sampleFrames()
	shared := make([]fanout.Shared, len(base))
	seqs := []uint64{0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffff, 1 << 32, 1<<64 - 20}
	for _, start := range seqs {
		for mask := range 4 {
			frames := slices.Clone(base)
			ptrs := make([]*fanout.Shared, len(frames))
			for i := range frames {
				frames[i].Seq = start + uint64(i)
				if mask == 3 || mask == 1 && i%2 == 0 || mask == 2 && i%3 != 0 {
					ptrs[i] = &shared[i]
				}
			}
			if mask == 2 {
				ptrs = ptrs[:len(ptrs)-3] // past the end: the subscriber's own
			}
			want, err := newFrameEncoder().encode(frames)
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.Clone(want)
			fe := newFrameEncoder()
			got, err := fe.encodeShared(frames, ptrs)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("seq %d, mask %d: shared encoding differs:\n got %x\nwant %x", start, mask, got, want)
			}
			fe.release()
		}
	}
	// Made once: a shared encoding is not made again from another copy.
	var s fanout.Shared
	calls := 0
	enc := func(f *synccore.Frame) ([]byte, error) { calls++; return frameBody(f) }
	for i := range 3 {
		f := base[3]
		f.Seq = uint64(i)
		if _, err := s.Encode(&f, enc); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Fatalf("encoded %d times", calls)
	}
	// A batch of more than 15 frames (a 16-bit array header).
	many := slices.Repeat(base[3:4], 40)
	ptrs := make([]*fanout.Shared, len(many))
	for i := range many {
		many[i].Seq = uint64(100 + i)
		ptrs[i] = &shared[3]
	}
	want, _ := newFrameEncoder().encode(many)
	want = bytes.Clone(want)
	if got, err := newFrameEncoder().encodeShared(many, ptrs); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("40 frames: %v, %x vs %x", err, got, want)
	}
}

// BenchmarkEncodeShared is one subscriber's encoding of a batch of 64
// deltas whose encodings another subscriber already made (shared),
// beside encoding them itself (own).
func BenchmarkEncodeShared(b *testing.B) {
	frames := make([]synccore.Frame, 64)
	shared := make([]fanout.Shared, len(frames))
	ptrs := make([]*fanout.Shared, len(frames))
	for i := range frames {
		frames[i] = synccore.Frame{Seq: uint64(1000 + i), Kind: synccore.FrameDelta, MessageID: "01JX0000000000000000000000", Revision: 3,
			PartID: "01JX0000000000000000000001", Offset: int64(100 * i), Text: strings.Repeat("x", 100)}
		ptrs[i] = &shared[i]
	}
	for _, mode := range []string{"own", "shared"} {
		b.Run(mode, func(b *testing.B) {
			fe := newFrameEncoder()
			for range b.N {
				var err error
				if mode == "own" {
					_, err = fe.encode(frames)
				} else {
					_, err = fe.encodeShared(frames, ptrs)
				}
				if err != nil {
					b.Fatal(err)
				}
				fe.release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
		})
	}
}
