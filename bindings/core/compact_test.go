package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// TestWasmCompactTakesProperty follows random streams through the Go host's
// path, WasmCore.HandleChanges (agentsync_handle_compact, §7.4.2) and a
// Mirror: deltas that mostly continue the part the last one went to (the
// compact answers), deltas to other parts, several frames in one event,
// new and replaced parts, deltas handled without a take (Handle) and takes
// of their own (Changes), multi-byte text. After every take the mirror
// holds exactly the core's view, and compact answers were taken.
func TestWasmCompactTakesProperty(t *testing.T) {
	rt := testRuntime(t)
	words := []string{"ab", "cdefgh", "é", "日本", "🙂x", " ", "z"}
	total := 0
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 15))
		w, err := NewWasmCore(context.Background(), rt)
		if err != nil {
			t.Fatal(err)
		}
		target := liveView(t, w, 8, 6)
		var mirror synccore.Mirror
		ch, err := w.Changes()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mirror.Apply(ch); err != nil {
			t.Fatal(err)
		}
		lens := []int{8} // each part's text length, p1 first
		seq := uint64(2)
		cur := 0
		delta := func() synccore.Frame {
			text := words[rng.IntN(len(words))]
			f := synccore.Frame{Seq: seq, Kind: synccore.FrameDelta, MessageID: target, Revision: 1,
				PartID: fmt.Sprintf("p%d", cur+1), Offset: int64(lens[cur]), Text: text}
			seq++
			lens[cur] += len(text)
			return f
		}
		part := func(i int, text string) synccore.Frame {
			f := synccore.Frame{Seq: seq, Kind: synccore.FramePart, MessageID: target, Revision: 1,
				Part: &synccore.Part{PartID: fmt.Sprintf("p%d", i+1), Sequence: int64(i + 1), Type: synccore.PartText,
					StepID: "s", State: synccore.StateStreaming, Text: text}}
			seq++
			if i == len(lens) {
				lens = append(lens, 0)
			}
			lens[i] = len(text)
			return f
		}
		for step := range 150 {
			var frames []synccore.Frame
			take := true
			switch r := rng.IntN(100); {
			case r < 60:
				frames = append(frames, delta())
			case r < 72:
				cur = rng.IntN(len(lens))
				frames = append(frames, delta())
			case r < 78:
				frames = append(frames, delta(), delta())
			case r < 84:
				cur = len(lens)
				frames = append(frames, part(cur, words[rng.IntN(len(words))]))
			case r < 88:
				i := rng.IntN(len(lens))
				frames = append(frames, part(i, fmt.Sprintf("replaced %d", step)))
			case r < 95:
				frames = append(frames, delta())
				take = false
			default:
				ch, err := w.Changes()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := mirror.Apply(ch); err != nil {
					t.Fatalf("seed %d step %d: apply changes: %v", seed, step, err)
				}
				continue
			}
			ev := framesEvent(t, frames...)
			if !take {
				if _, err := w.Handle(ev); err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				continue
			}
			_, ch, err := w.HandleChanges(ev)
			if err != nil || ch == nil {
				t.Fatalf("seed %d step %d: changes %v, %v", seed, step, ch, err)
			}
			if _, err := mirror.Apply(*ch); err != nil {
				t.Fatalf("seed %d step %d: apply: %v", seed, step, err)
			}
			v, err := w.View()
			if err != nil {
				t.Fatal(err)
			}
			if got := wire.DigestMessages(mirror.Messages().Values()); got != v.Digest {
				t.Fatalf("seed %d step %d (%d frames): the mirror's digest %s, the core's %s", seed, step, len(frames), got, v.Digest)
			}
		}
		total += w.compacts
		w.Close()
	}
	// About half the steps continue the last part's delta.
	if total < 40*30 {
		t.Fatalf("%d compact answers in 40 streams of 150 steps: the compact path was not taken", total)
	}
}
