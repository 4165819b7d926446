package api

import (
	"sync"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// frameEncoder packs a batch of frames into one WebSocket message: a
// msgpack array of frames (docs/protocol.md §4), written by synccore's
// reflection-free codec (3.5 µs and 11 allocations per delta frame through
// msgpack/v5, ~40 ns and none here; BenchmarkFrameEncoder). It reuses its
// buffer, so the bytes it returns are valid until the next call, and
// gives it back to a pool shared by every subscription once the batch is
// written (release): an idle subscription holds no buffer, and one that
// was sent a long answer's frames keeps nothing of their size.
type frameEncoder struct{ b *[]byte }

func newFrameEncoder() *frameEncoder { return &frameEncoder{} }

// encodeBuffers are the buffers of subscriptions writing a batch now.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuffer bounds the buffers kept in encodeBuffers: one grown by a
// whole large message (a snapshot of a long answer) goes to the collector.
const maxPooledBuffer = 4 * maxMessageText

// maxMessageText bounds the text one WebSocket message carries when a
// subscriber's queue held more (a reader that fell behind, its deltas
// folded): a browser handles a message in one task, so the message's size
// is that task's length. A frame larger than this goes alone.
const maxMessageText = 64 << 10

// nextMessage splits off the frames of the next WebSocket message: as many
// as fit in maxMessageText of text, at least one.
func nextMessage(frames []synccore.Frame) (msg, rest []synccore.Frame) {
	n := 0
	for i := range frames {
		n += frameText(&frames[i])
		if i > 0 && n > maxMessageText {
			return frames[:i], frames[i:]
		}
	}
	return frames, nil
}

// frameText is the text a frame carries: a delta's, a part's, a message's
// parts'.
func frameText(f *synccore.Frame) int {
	n := len(f.Text)
	if f.Part != nil {
		n += len(f.Part.Text)
	}
	if f.Message != nil {
		for i := range f.Message.Parts {
			n += len(f.Message.Parts[i].Text)
		}
	}
	return n
}

func (f *frameEncoder) encode(frames []synccore.Frame) ([]byte, error) {
	if f.b == nil {
		f.b = encodeBuffers.Get().(*[]byte)
	}
	b, err := wire.AppendFrames((*f.b)[:0], frames)
	if err != nil {
		return nil, err
	}
	*f.b = b
	return b, nil
}

// release gives the buffer back; the bytes encode returned are invalid
// from now on.
func (f *frameEncoder) release() {
	if f.b == nil {
		return
	}
	if cap(*f.b) <= maxPooledBuffer {
		encodeBuffers.Put(f.b)
	}
	f.b = nil
}
