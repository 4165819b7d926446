package fanout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

func delta(text string) synccore.Frame {
	return synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", PartID: "p", Text: text}
}

func next(t *testing.T, s *Subscriber) []synccore.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fs, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next: %v", err)
	}
	return append([]synccore.Frame(nil), fs...)
}

func TestNumberingIsGaplessPerSubscriber(t *testing.T) {
	h := NewHub(Limits{})
	a := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	h.Publish(delta("x"), delta("y"))
	b := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}, {Kind: synccore.FramePart}})
	h.Publish(delta("z"))

	got := next(t, a)
	if len(got) != 4 {
		t.Fatalf("a got %d frames", len(got))
	}
	for i, f := range got {
		if f.Seq != uint64(i+1) {
			t.Fatalf("a frame %d seq %d", i, f.Seq)
		}
	}
	got = next(t, b)
	if len(got) != 3 || got[0].Kind != synccore.FrameHello || got[2].Text != "z" || got[2].Seq != 3 {
		t.Fatalf("b got %+v", got)
	}
	h.Publish(delta("w"))
	if got := next(t, b); len(got) != 1 || got[0].Seq != 4 {
		t.Fatalf("b then got %+v", got)
	}
}

func TestNextBlocksUntilPublish(t *testing.T) {
	h := NewHub(Limits{})
	s := h.Subscribe(nil)
	done := make(chan []synccore.Frame)
	go func() {
		fs, _ := s.Next(context.Background())
		done <- append([]synccore.Frame(nil), fs...)
	}()
	select {
	case <-done:
		t.Fatal("Next returned with nothing queued")
	case <-time.After(20 * time.Millisecond):
	}
	h.Publish(delta("a"))
	if fs := <-done; len(fs) != 1 || fs[0].Text != "a" {
		t.Fatalf("got %+v", fs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Next: %v", err)
	}
}

func TestOverflowResyncsOnlyTheSlowSubscriber(t *testing.T) {
	h := NewHub(Limits{Frames: 4})
	slow := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	fast := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	if got := next(t, slow); len(got) != 1 {
		t.Fatal("hello")
	}
	var fastGot []synccore.Frame
	fastGot = append(fastGot, next(t, fast)...)
	for i := 0; i < 10; i++ {
		h.Publish(delta("x"))
		fastGot = append(fastGot, next(t, fast)...)
	}
	if len(fastGot) != 11 || fastGot[10].Seq != 11 {
		t.Fatalf("fast got %d frames", len(fastGot))
	}
	got := next(t, slow)
	if len(got) != 1 || got[0].Kind != synccore.FrameResync || got[0].Code != ResyncSlowConsumer || got[0].Seq != 2 {
		t.Fatalf("slow got %+v", got)
	}
	if _, err := slow.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after resync: %v", err)
	}
	if h.Len() != 1 {
		t.Fatalf("%d subscribers left, want the fast one", h.Len())
	}
}

// A subscriber resynced before it read its hello gets the hello, then
// the resync: a client reads hello first.
func TestResyncKeepsAnUnreadHello(t *testing.T) {
	h := NewHub(Limits{Frames: 4})
	s := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}, delta("a")})
	for i := 0; i < 10; i++ {
		h.Publish(delta("x"))
	}
	got := next(t, s)
	if len(got) != 2 || got[0].Kind != synccore.FrameHello || got[0].Seq != 1 ||
		got[1].Kind != synccore.FrameResync || got[1].Code != ResyncSlowConsumer || got[1].Seq != 2 {
		t.Fatalf("got %+v", got)
	}
	r := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	h.Resync(ResyncOwnerChanged, "moved")
	if got := next(t, r); len(got) != 2 || got[0].Kind != synccore.FrameHello || got[1].Kind != synccore.FrameResync || got[1].Seq != 2 {
		t.Fatalf("got %+v", got)
	}
}

func TestCloseAndHubClose(t *testing.T) {
	h := NewHub(Limits{})
	a := h.Subscribe(nil)
	b := h.Subscribe(nil)
	h.Publish(delta("x"))
	a.Close()
	if _, err := a.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("closed subscriber: %v", err)
	}
	if h.Len() != 1 {
		t.Fatal("Close leaves the hub")
	}
	h.Close()
	h.Publish(delta("after close"))
	if got := next(t, b); len(got) != 1 || got[0].Text != "x" {
		t.Fatalf("b drains what was queued: %+v", got)
	}
	if _, err := b.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after hub close: %v", err)
	}
	late := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	if got := next(t, late); len(got) != 1 {
		t.Fatal("a subscriber of a closed hub gets its initial frames")
	}
	if _, err := late.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatal("then EOF")
	}
}

// Many publishers and readers at once: every reader sees every frame once,
// in order (run with -race).
func TestConcurrentPublishAndRead(t *testing.T) {
	h := NewHub(Limits{Frames: 1 << 20})
	const readers, frames = 8, 5000
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for r := 0; r < readers; r++ {
		s := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seen uint64
			for {
				fs, err := s.Next(context.Background())
				if err != nil {
					if seen != frames+1 {
						errs <- errors.New("short read")
					}
					return
				}
				for _, f := range fs {
					if f.Seq != seen+1 {
						errs <- errors.New("gap")
						return
					}
					seen = f.Seq
				}
			}
		}()
	}
	for i := 0; i < frames; i++ {
		h.Publish(delta("x"))
	}
	h.Close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestSharedEncodings: with more than one subscriber, every published
// frame a subscriber's queue holds as published carries the one Shared
// all subscribers get; a delta that another was folded into, and the
// subscriber's own frames (initial, resync), carry none.
func TestSharedEncodings(t *testing.T) {
	h := NewHub(Limits{Frames: 8})
	a := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	b := h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}})
	ctx := context.Background()
	if fs, _ := a.Next(ctx); len(fs) != 1 || len(a.Shared()) != 0 {
		t.Fatalf("initial frames: %d, shared %v", len(fs), a.Shared())
	}
	d := func(off int64, text string) synccore.Frame {
		return synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", Revision: 1, PartID: "p", Offset: off, Text: text}
	}
	h.Publish(synccore.Frame{Kind: synccore.FramePart, MessageID: "m", Revision: 1, Part: &synccore.Part{PartID: "p"}}, d(0, "ab"))
	h.Publish(d(2, "cd")) // folds into the delta at 0 for both
	h.Publish(synccore.Frame{Kind: synccore.FrameMessage, Message: &synccore.Message{MessageID: "m", Revision: 2}})
	fa, _ := a.Next(ctx)
	sa := slices.Clone(a.Shared())
	fb, _ := b.Next(ctx) // b's hello, then the same frames
	sb := slices.Clone(b.Shared())
	if len(fa) != 3 || fa[1].Text != "abcd" || len(fb) != 4 {
		t.Fatalf("frames a %+v, b %+v", fa, fb)
	}
	if len(sa) != 3 || sa[0] == nil || sa[1] != nil || sa[2] == nil {
		t.Fatalf("a's shared %v", sa)
	}
	if len(sb) != 4 || sb[0] != nil || sb[1] != sa[0] || sb[2] != nil || sb[3] != sa[2] {
		t.Fatalf("b's shared %v beside a's %v", sb, sa)
	}
	// Overflow: the resync frame is a's own.
	for i := range 10 {
		h.Publish(synccore.Frame{Kind: synccore.FrameMessage, Message: &synccore.Message{MessageID: fmt.Sprint(i), Revision: 1}})
	}
	if fa, _ := a.Next(ctx); len(fa) != 1 || fa[0].Kind != synccore.FrameResync || len(a.Shared()) != 0 {
		t.Fatalf("after overflow: %+v, shared %v", fa, a.Shared())
	}
	// Alone, a subscriber encodes its own frames.
	h2 := NewHub(Limits{})
	c := h2.Subscribe(nil)
	h2.Publish(d(0, "x"))
	if fc, _ := c.Next(ctx); len(fc) != 1 || len(c.Shared()) != 0 {
		t.Fatalf("one subscriber: %+v, shared %v", fc, c.Shared())
	}
}
