package api

import (
	"errors"
	"sync"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/internal/fanout"
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

// encodeShared packs frames exactly as encode does, byte for byte, but
// takes every frame that has a shared encoding (shared[i], made once for
// all subscribers of the session: fanout.Shared) from it, with this
// subscription's seq spliced in, instead of encoding it again. Frames
// without one (shared[i] nil or past its end) are encoded here.
func (f *frameEncoder) encodeShared(frames []synccore.Frame, shared []*fanout.Shared) ([]byte, error) {
	if !anyShared(shared) {
		return f.encode(frames)
	}
	if f.b == nil {
		f.b = encodeBuffers.Get().(*[]byte)
	}
	b := appendArrayHeader((*f.b)[:0], len(frames))
	for i := range frames {
		if i < len(shared) && shared[i] != nil {
			if body, err := shared[i].Encode(&frames[i], frameBody); err == nil {
				b = append(b, body[:len(seqKey)+1]...)
				b = appendUint(b, frames[i].Seq)
				b = append(b, body[len(seqKey)+2:]...)
				continue
			}
		}
		at := len(b)
		var err error
		if b, err = wire.AppendFrames(b, frames[i:i+1]); err != nil {
			*f.b = b[:0]
			return nil, err
		}
		b = append(b[:at], b[at+1:]...) // drop the one-frame array's header
	}
	*f.b = b
	return b, nil
}

func anyShared(shared []*fanout.Shared) bool {
	for _, s := range shared {
		if s != nil {
			return true
		}
	}
	return false
}

// seqKey is how every encoded frame begins after its map header: the key
// "seq" (a 3-byte fixstr), then the value.
const seqKey = "\xa3seq"

var errFrameLayout = errors.New("encoded frame does not start with its seq")

// frameBody encodes f as one frame of a WebSocket message with seq 0: a
// map header, the seq key, the value 0 (one byte), the rest. Any other
// seq is spliced in the same place (appendUint), as the codec writes it.
func frameBody(f *synccore.Frame) ([]byte, error) {
	c := *f
	c.Seq = 0
	b, err := wire.AppendFrames(make([]byte, 0, 96+frameText(&c)), []synccore.Frame{c})
	if err != nil {
		return nil, err
	}
	// 0x91: an array of one frame; then a fixmap; seq; 0.
	if len(b) < len(seqKey)+3 || b[0] != 0x91 || b[1]&0xf0 != 0x80 || string(b[2:2+len(seqKey)]) != seqKey || b[2+len(seqKey)] != 0 {
		return nil, errFrameLayout
	}
	return b[1:], nil
}

// appendArrayHeader and appendUint write a msgpack array header and an
// unsigned int in their smallest forms, as synccore's codec does.
func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= 0xffff:
		return append(b, 0xdc, byte(n>>8), byte(n))
	default:
		return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= 0x7f:
		return append(b, byte(n))
	case n <= 0xff:
		return append(b, 0xcc, byte(n))
	case n <= 0xffff:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= 0xffffffff:
		return append(b, 0xce, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return append(b, 0xcf, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
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
