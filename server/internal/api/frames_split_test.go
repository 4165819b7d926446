package api

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// TestNextMessageSplitsByText: the messages a batch is cut into hold its
// frames in order, each at least one frame and, unless it is one frame
// alone, at most maxMessageText of text.
func TestNextMessageSplitsByText(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for range 500 {
		var frames []synccore.Frame
		for i := range rng.Intn(40) {
			f := synccore.Frame{Seq: uint64(i + 1), Kind: synccore.FrameDelta, Text: strings.Repeat("x", rng.Intn(maxMessageText/4))}
			switch rng.Intn(6) {
			case 0:
				f = synccore.Frame{Seq: uint64(i + 1), Kind: synccore.FramePart, Part: &synccore.Part{Text: strings.Repeat("y", rng.Intn(2*maxMessageText))}}
			case 1:
				f = synccore.Frame{Seq: uint64(i + 1), Kind: synccore.FrameMessage, Message: &synccore.Message{Parts: []synccore.Part{{Text: "z"}, {Text: strings.Repeat("z", rng.Intn(maxMessageText))}}}}
			}
			frames = append(frames, f)
		}
		var seqs []uint64
		for rest := frames; len(rest) > 0; {
			var msg []synccore.Frame
			msg, rest = nextMessage(rest)
			text := 0
			for i := range msg {
				text += frameText(&msg[i])
				seqs = append(seqs, msg[i].Seq)
			}
			if len(msg) == 0 || (len(msg) > 1 && text > maxMessageText) {
				t.Fatalf("a message of %d frames and %d bytes of text", len(msg), text)
			}
		}
		if len(seqs) != len(frames) {
			t.Fatalf("%d frames out of %d", len(seqs), len(frames))
		}
		for i, s := range seqs {
			if s != uint64(i+1) {
				t.Fatalf("frame %d has seq %d", i, s)
			}
		}
	}
}
