package api

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// TestEliderProperty runs random streams of deltas, part frames (some
// continuing the text, some replacing it) and commits over two parts
// through an elider, and rebuilds the texts from what it sends as a client
// does. They must be the texts sent whole, every kept length what the
// client holds, and the frames it was given (shared with other
// subscribers) untouched.
func TestEliderProperty(t *testing.T) {
	kept := 0
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		el := newElider()
		truth := map[string]string{} // what the server holds
		held := map[string]string{}  // what the client rebuilt
		ids := []string{"p1", "p2"}
		word := func() string { return strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(5)) }
		for step := 0; step < 200; step++ {
			id := ids[rng.IntN(2)]
			var f synccore.Frame
			switch r := rng.IntN(10); {
			case r < 6:
				f = synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", PartID: id, Offset: int64(len(truth[id])), Text: word()}
				truth[id] += f.Text
			case r < 8:
				text := word()
				if rng.IntN(2) == 0 {
					text = truth[id] + text // continues the text
				}
				truth[id] = text
				f = synccore.Frame{Kind: synccore.FramePart, MessageID: "m", Part: &synccore.Part{PartID: id, Type: synccore.PartText, Text: text}}
			default:
				m := &synccore.Message{MessageID: "m", State: synccore.MessageStreaming}
				for _, p := range ids {
					m.Parts = append(m.Parts, synccore.Part{PartID: p, Type: synccore.PartText, Text: truth[p]})
				}
				f = synccore.Frame{Kind: synccore.FrameMessage, Message: m}
			}
			orig, origText := f, frameTexts(f)
			fs := []synccore.Frame{f}
			el.frames(fs, nil)
			kept += len(fs[0].Kept)
			apply(t, held, fs[0])
			for _, p := range ids {
				if held[p] != truth[p] {
					t.Fatalf("seed %d step %d: part %s rebuilt %q, server holds %q", seed, step, p, held[p], truth[p])
				}
			}
			if !slices.Equal(frameTexts(orig), origText) {
				t.Fatalf("seed %d step %d: the shared frame was written to", seed, step)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no text was ever kept")
	}
}

// apply rebuilds the texts of held from f as a client does (§4.5).
func apply(t *testing.T, held map[string]string, f synccore.Frame) {
	t.Helper()
	put := func(p synccore.Part) {
		for _, k := range f.Kept {
			if k.PartID == p.PartID {
				if int64(len(held[p.PartID])) != k.Len {
					t.Fatalf("kept %d bytes of %s, the client holds %d", k.Len, p.PartID, len(held[p.PartID]))
				}
				held[p.PartID] += p.Text
				return
			}
		}
		held[p.PartID] = p.Text
	}
	switch f.Kind {
	case synccore.FrameDelta:
		held[f.PartID] += f.Text
	case synccore.FramePart:
		put(*f.Part)
	case synccore.FrameMessage:
		for _, p := range f.Message.Parts {
			put(p)
		}
	}
}

// frameTexts lists the texts of f's part or message.
func frameTexts(f synccore.Frame) []string {
	var texts []string
	if f.Part != nil {
		texts = append(texts, f.Part.Text)
	}
	if f.Message != nil {
		for _, p := range f.Message.Parts {
			texts = append(texts, p.Text)
		}
	}
	return texts
}
