package fanout

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// foldStream publishes random frames of a turn: deltas to two parts of one
// message (in order, with now and then a new revision that starts the
// text over), part frames, and message frames, and keeps the texts a
// client must end with.
type foldStream struct {
	rng   *rand.Rand
	rev   int64
	texts map[string]string // part id -> text at the current revision
}

func (st *foldStream) next() synccore.Frame {
	switch r := st.rng.Intn(100); {
	case r < 2:
		st.rev++ // a commit: the projection starts over
		st.texts = map[string]string{}
		return synccore.Frame{Kind: synccore.FrameMessage, Message: &synccore.Message{MessageID: "m", Revision: st.rev}}
	case r < 4:
		return synccore.Frame{Kind: synccore.FramePart, MessageID: "m", Revision: st.rev, Part: &synccore.Part{PartID: "x"}}
	default:
		part := []string{"a", "b"}[st.rng.Intn(2)]
		text := strings.Repeat(string(rune('a'+st.rng.Intn(26))), 1+st.rng.Intn(2000))
		if st.rng.Intn(4) == 0 {
			text = "é" + text // multi-byte: offsets are bytes
		}
		f := synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", Revision: st.rev, PartID: part, Offset: int64(len(st.texts[part])), Text: text}
		st.texts[part] += text
		return f
	}
}

// TestFoldedDeltasLoseNothing: whatever a reader's pace, it rebuilds every
// text from what it reads, with gapless seqs and no delta over FoldLimit;
// a reader that reads after every frame gets every frame as published.
func TestFoldedDeltasLoseNothing(t *testing.T) {
	for seed := range 200 {
		rng := rand.New(rand.NewSource(int64(seed)))
		h := NewHub(Limits{Frames: 1 << 20, Bytes: 1 << 30})
		lazy := h.Subscribe(nil)
		eager := h.Subscribe(nil)
		st := &foldStream{rng: rng, texts: map[string]string{}}
		var lazyFrames, eagerFrames, published []synccore.Frame
		for range 50 + rng.Intn(500) {
			f := st.next()
			published = append(published, f)
			h.Publish(f)
			eagerFrames = append(eagerFrames, next(t, eager)...)
			if rng.Intn(20) == 0 {
				lazyFrames = append(lazyFrames, next(t, lazy)...)
			}
		}
		h.Publish(synccore.Frame{Kind: synccore.FrameHello}) // a last frame, so both have something to read
		published = append(published, synccore.Frame{Kind: synccore.FrameHello})
		lazyFrames = append(lazyFrames, next(t, lazy)...)
		eagerFrames = append(eagerFrames, next(t, eager)...)

		if len(eagerFrames) != len(published) {
			t.Fatalf("seed %d: the eager reader got %d frames, %d published", seed, len(eagerFrames), len(published))
		}
		for i, f := range eagerFrames {
			f.Seq = 0
			if fmt.Sprint(f) != fmt.Sprint(published[i]) {
				t.Fatalf("seed %d: eager frame %d is %+v, published %+v", seed, i, f, published[i])
			}
		}
		texts := replay(t, seed, lazyFrames)
		for part, want := range st.texts {
			if texts[part] != want {
				t.Fatalf("seed %d: part %s rebuilt as %d bytes, want %d", seed, part, len(texts[part]), len(want))
			}
		}
		if len(lazyFrames) >= len(published) && len(published) > 100 {
			t.Fatalf("seed %d: the lazy reader got %d frames of %d: nothing was folded", seed, len(lazyFrames), len(published))
		}
	}
}

// replay applies frames as a client does (a delta must land at the end of
// its part's text at its revision) and returns the texts at the last
// revision.
func replay(t *testing.T, seed int, frames []synccore.Frame) map[string]string {
	t.Helper()
	return replayFrom(t, seed, frames, 0, map[string]string{})
}

// replayFrom is replay for a reader whose texts were texts at revision
// rev before its first frame.
func replayFrom(t *testing.T, seed int, frames []synccore.Frame, rev int64, texts map[string]string) map[string]string {
	t.Helper()
	for i, f := range frames {
		if f.Seq != uint64(i+1) {
			t.Fatalf("seed %d: frame %d has seq %d", seed, i, f.Seq)
		}
		switch f.Kind {
		case synccore.FrameMessage:
			rev, texts = f.Message.Revision, map[string]string{}
		case synccore.FrameDelta:
			if f.Revision != rev || f.Offset != int64(len(texts[f.PartID])) {
				t.Fatalf("seed %d: delta at %d rev %d, the text is %d bytes at rev %d", seed, f.Offset, f.Revision, len(texts[f.PartID]), rev)
			}
			if len(f.Text) > FoldLimit {
				t.Fatalf("seed %d: a delta of %d bytes", seed, len(f.Text))
			}
			texts[f.PartID] += f.Text
		}
	}
	return texts
}

// TestQueueBytesBoundFoldedDeltas: a reader that never reads is resynced
// once the delta text queued passes Limits.Bytes, though its frames fold
// into one; one that reads stays.
func TestQueueBytesBoundFoldedDeltas(t *testing.T) {
	h := NewHub(Limits{Frames: 8, Bytes: 1_000})
	stalled := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	reading := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	next(t, reading)
	var off int64
	published := 0
	for h.Len() == 2 && published < 1000 {
		h.Publish(synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", PartID: "p", Offset: off, Text: "0123456789"})
		off += 10
		published++
		if got := next(t, reading); len(got) != 1 || got[0].Text != "0123456789" {
			t.Fatalf("the reading subscriber got %+v", got)
		}
	}
	if published != 101 {
		t.Fatalf("the stalled reader left after %d deltas of 10 bytes, want 101 (past 1,000 bytes)", published)
	}
	// What it did not read is dropped (it re-reads the snapshot): its hello, then the resync.
	if got := next(t, stalled); len(got) != 2 || got[0].Kind != synccore.FrameHello || got[1].Kind != synccore.FrameResync || got[1].Code != ResyncSlowConsumer {
		t.Fatalf("the stalled reader got %+v", got)
	}
}
