package api

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/synccore"
)

// frameEncoder packs a batch of frames into one WebSocket message: a
// msgpack array of frames (docs/protocol.md §4). It reuses its buffer, so
// the bytes it returns are valid until the next call.
//
// The frame envelope is written field by field with the encoder's
// primitives: reflection over Frame's omitempty fields cost over half of
// the fan-out CPU. Nested messages and parts (rarer, and holding `any`
// values) still go through msgpack's reflection. The bytes are identical
// to msgpack.Marshal with compact ints (frames_test.go checks).
type frameEncoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

func newFrameEncoder() *frameEncoder {
	f := &frameEncoder{}
	f.enc = newEncoder(&f.buf)
	return f
}

func (f *frameEncoder) encode(frames []synccore.Frame) ([]byte, error) {
	f.buf.Reset()
	if err := f.enc.EncodeArrayLen(len(frames)); err != nil {
		return nil, err
	}
	for i := range frames {
		if err := f.frame(&frames[i]); err != nil {
			return nil, fmt.Errorf("frame %d (%s): %w", frames[i].Seq, frames[i].Kind, err)
		}
	}
	return f.buf.Bytes(), nil
}

// frame writes one frame as a map of its non-empty fields, in the order
// of synccore.Frame's fields (the order msgpack/v5 uses).
func (f *frameEncoder) frame(fr *synccore.Frame) error {
	n := 2 // seq and kind are never omitted
	for _, set := range [...]bool{
		fr.Protocol != 0, fr.SessionID != "", fr.HeadSequence != 0, fr.Message != nil,
		fr.MessageID != "", fr.Revision != 0, fr.Part != nil, fr.PartID != "",
		fr.Offset != 0, fr.Text != "", fr.Code != "", fr.Reason != "",
	} {
		if set {
			n++
		}
	}
	e := f.enc
	// The buffer's writes cannot fail; errors only come from nested values.
	_ = e.EncodeMapLen(n)
	f.key("seq")
	_ = e.EncodeUint(fr.Seq)
	f.key("kind")
	_ = e.EncodeString(fr.Kind)
	if fr.Protocol != 0 {
		f.key("protocol")
		_ = e.EncodeInt(int64(fr.Protocol))
	}
	f.str("session_id", fr.SessionID)
	f.int("head_sequence", fr.HeadSequence)
	if fr.Message != nil {
		f.key("message")
		if err := e.Encode(fr.Message); err != nil {
			return err
		}
	}
	f.str("message_id", fr.MessageID)
	f.int("revision", fr.Revision)
	if fr.Part != nil {
		f.key("part")
		if err := e.Encode(fr.Part); err != nil {
			return err
		}
	}
	f.str("part_id", fr.PartID)
	f.int("offset", fr.Offset)
	f.str("text", fr.Text)
	f.str("code", fr.Code)
	f.str("reason", fr.Reason)
	return nil
}

func (f *frameEncoder) key(k string) { _ = f.enc.EncodeString(k) }

func (f *frameEncoder) str(k, v string) {
	if v != "" {
		f.key(k)
		_ = f.enc.EncodeString(v)
	}
}

func (f *frameEncoder) int(k string, v int64) {
	if v != 0 {
		f.key(k)
		_ = f.enc.EncodeInt(v)
	}
}
