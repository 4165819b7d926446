package fanout

import (
	"context"
	"errors"
	"io"
	"maps"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// drain reads s until io.EOF in its own goroutine; wait returns what it
// read and when each batch came.
func drain(t *testing.T, s *Subscriber) (wait func() ([]synccore.Frame, []time.Time)) {
	var frames []synccore.Frame
	var at []time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for {
			fs, err := s.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				t.Errorf("next: %v", err)
				return
			}
			frames = append(frames, fs...)
			at = append(at, time.Now())
		}
	}()
	return func() ([]synccore.Frame, []time.Time) { wg.Wait(); return frames, at }
}

// TestPacedHubLosesNothing: with a pacer, random streams published at
// random moments to subscribers that join at random moments reach each of
// them whole from where it joined (gapless seqs, every text rebuilt, no
// frame it had in its initial ones again), and fewer batches than frames.
func TestPacedHubLosesNothing(t *testing.T) {
	t.Parallel()
	for seed := range 20 {
		rng := rand.New(rand.NewSource(int64(seed)))
		p := NewPacer(time.Millisecond)
		h := NewHub(Limits{Frames: 1 << 20, Bytes: 1 << 30, Pacer: p})
		st := &foldStream{rng: rng, texts: map[string]string{}}
		type joined struct {
			rev   int64
			texts map[string]string
			wait  func() ([]synccore.Frame, []time.Time)
		}
		var subs []joined
		published := 0
		for range 100 + rng.Intn(300) {
			if rng.Intn(40) == 0 || len(subs) == 0 {
				// What the engine's snapshot would hold: everything published.
				subs = append(subs, joined{st.rev, maps.Clone(st.texts), drain(t, h.Subscribe(nil))})
			}
			h.Publish(st.next())
			published++
			if rng.Intn(10) == 0 {
				time.Sleep(time.Duration(rng.Intn(1500)) * time.Microsecond)
			}
		}
		if p.Subscribers() != int64(len(subs)) {
			t.Fatalf("seed %d: the pacer counts %d subscribers, %d joined", seed, p.Subscribers(), len(subs))
		}
		h.Close()
		for i, s := range subs {
			frames, _ := s.wait()
			texts := replayFrom(t, seed, frames, s.rev, s.texts)
			for part, want := range st.texts {
				if texts[part] != want {
					t.Fatalf("seed %d: subscriber %d rebuilt part %s as %d bytes, want %d", seed, i, part, len(texts[part]), len(want))
				}
			}
		}
		if first, _ := subs[0].wait(); len(first) >= published {
			t.Fatalf("seed %d: %d frames for %d published: nothing was folded", seed, len(first), published)
		}
		if p.Subscribers() != 0 {
			t.Fatalf("seed %d: the pacer counts %d subscribers after the close", seed, p.Subscribers())
		}
	}
}

// TestPacedHubDeliversOncePerInterval: a stream of deltas published every
// millisecond reaches a reader in about one batch per interval; the first
// after a quiet moment comes at once; a resync is not held back.
func TestPacedHubDeliversOncePerInterval(t *testing.T) {
	t.Parallel()
	const interval = 40 * time.Millisecond
	h := NewHub(Limits{Pacer: NewPacer(interval)})
	s := h.Subscribe(nil)
	wait := drain(t, s)
	start := time.Now()
	for i := range 400 {
		h.Publish(synccore.Frame{Kind: synccore.FrameDelta, MessageID: "m", PartID: "p", Offset: int64(i), Text: "x"})
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start)
	time.Sleep(2 * interval) // quiet
	quiet := time.Now()
	h.Publish(synccore.Frame{Kind: synccore.FramePart, MessageID: "m", Part: &synccore.Part{PartID: "q"}})
	time.Sleep(interval / 4)
	h.Resync(ResyncOwnerChanged, "test")
	frames, at := wait()
	if most := 2 + int(took/interval); len(at) > most+2 {
		t.Fatalf("%d batches in %s, at most about %d with a %s interval", len(at), took, most, interval)
	}
	var text int
	for _, f := range frames {
		text += len(f.Text)
	}
	if text != 400 {
		t.Fatalf("%d bytes of text reached the reader, 400 published", text)
	}
	// The part frame after the quiet moment came at once, the resync a
	// quarter interval later, without waiting for the interval.
	if len(at) < 2 || at[len(at)-2].Sub(quiet) > interval/2 || frames[len(frames)-1].Kind != synccore.FrameResync {
		t.Fatalf("the part after a quiet moment or the resync was held back: last batches at %v, %v after it", at[len(at)-2].Sub(quiet), at[len(at)-1].Sub(quiet))
	}
}

// TestAutomaticPacerScalesWithSubscribers: none under 100 subscribers,
// then subscribers / WritesPerSecond up to MaxInterval.
func TestAutomaticPacerScalesWithSubscribers(t *testing.T) {
	p := NewPacer(0)
	for _, c := range []struct {
		subs int
		want time.Duration
	}{{0, 0}, {99, 0}, {100, 2 * time.Millisecond}, {1000, 20 * time.Millisecond}, {10000, 200 * time.Millisecond}, {100000, MaxInterval}} {
		p.subs.Store(int64(c.subs))
		if got := p.Interval(); got != c.want {
			t.Errorf("%d subscribers: interval %s, want %s", c.subs, got, c.want)
		}
	}
	if NewPacer(-1).Interval() != 0 || NewPacer(time.Second).Interval() != time.Second {
		t.Errorf("a negative pacer paces, or a fixed one is not fixed")
	}
}
