package fanout

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// A subscriber that fell behind a burst (thousands of frames queued,
// deltas folded into 64 KB ones) keeps nothing of the burst's size once
// it has read it and waits for more: an idle viewer of a long answer
// holds what an idle viewer of a short one does.
func TestIdleSubscriberKeepsNothingOfABurst(t *testing.T) {
	h := NewHub(Limits{})
	s := h.Subscribe(nil)
	defer s.Close()
	text := strings.Repeat("x", 512)
	for i := range 3000 {
		h.Publish(synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", Revision: 1, PartID: "p", Offset: int64(i * len(text)), Text: text})
		if i%10 == 0 { // a frame that is not a delta ends the fold, so the queue grows
			h.Publish(synccore.Frame{Kind: synccore.FramePart, MessageID: "m", Revision: 1, Part: &synccore.Part{PartID: "q"}})
		}
	}
	frames, err := s.Next(context.Background())
	if err != nil || len(frames) < 300 {
		t.Fatalf("the burst: %d frames, %v", len(frames), err)
	}
	// Next again: the reader is done with the burst; with nothing queued
	// it waits (here until the context ends).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Next(ctx); err == nil {
		t.Fatal("Next returned frames nobody published")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cap(s.queue) > keptFrames || cap(s.spare) > keptFrames || cap(s.fold) > keptBytes {
		t.Fatalf("an idle subscriber keeps a queue of %d frames, a spare of %d and a fold buffer of %d bytes",
			cap(s.queue), cap(s.spare), cap(s.fold))
	}
}
