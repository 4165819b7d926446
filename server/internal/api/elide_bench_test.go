package api

import (
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// BenchmarkEliderDeltas is one subscription's elider over batches of 32
// deltas of 8 bytes to one part (what a `?kept=1` subscriber of a busy
// session is sent per WebSocket message): ns/op is one batch of 32 (the
// frames' construction included), paid once per subscriber.
func BenchmarkEliderDeltas(b *testing.B) {
	el := newElider()
	const n = 32
	batch := make([]synccore.Frame, n)
	off := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		for i := range batch {
			batch[i] = synccore.Frame{Kind: synccore.FrameDelta, MessageID: "msg_0123456789abcdef0123", PartID: "text:1", Offset: off, Text: "abcdefgh"}
			off += 8
		}
		el.frames(batch, nil)
	}
	b.SetBytes(n * 8)
	if s := el.parts[partKey{"msg_0123456789abcdef0123", "text:1"}]; s == nil || int64(s.n) != off {
		b.Fatalf("the elider lost the part's text: %+v, want %d bytes", s, off)
	}
}
