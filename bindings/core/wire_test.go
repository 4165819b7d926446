package core

import (
	"bytes"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// The hand-made frames header must be the bytes msgpack/v5 writes, since
// the core's fast event decoder and the reflective one must both accept it.
func TestFramesEventHeaderMatchesMsgpack(t *testing.T) {
	for _, n := range []int{0, 1, 31, 255, 256, 65535, 65536, 1 << 20} {
		data := bytes.Repeat([]byte{0x93}, n)
		ev := synccore.Event{Type: synccore.EvFrames, Data: data}
		if !isPlainFrames(&ev) {
			t.Fatal("a frames event is not plain")
		}
		got := append(appendFramesEventHeader(nil, n), data...)
		want := encode(t, ev)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes of data: header %x, msgpack %x", n, got[:min(len(got), 24)], want[:min(len(want), 24)])
		}
	}
	if ev := (synccore.Event{Type: synccore.EvFrames, Data: []byte{1}, Jitter: 3}); isPlainFrames(&ev) {
		t.Fatal("a frames event with a jitter is plain")
	}
}
