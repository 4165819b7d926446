package fanout

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// onDemandReader reads a subscriber as the WebSocket writer does: a
// goroutine runs only while Poll has frames, and OnReady starts the next.
// It counts the goroutines it started and fails on a second one running
// beside the first.
type onDemandReader struct {
	s       *Subscriber
	seen    uint64
	running atomic.Int32
	started atomic.Int32
	err     error
	done    chan struct{}
	mu      sync.Mutex
	again   bool
	active  bool
}

func (r *onDemandReader) kick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active {
		r.again = true
		return
	}
	r.active = true
	go r.run()
}

func (r *onDemandReader) run() {
	r.started.Add(1)
	if r.running.Add(1) != 1 {
		r.err = errors.New("two readers at once")
	}
	for {
		fs, err := r.s.Poll()
		for _, f := range fs {
			if f.Seq != r.seen+1 {
				r.err = errors.New("gap")
			}
			r.seen = f.Seq
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			r.running.Add(-1)
			close(r.done)
			return
		}
		if len(fs) > 0 {
			continue
		}
		r.s.OnReady(r.kick)
		r.mu.Lock()
		if r.again {
			r.again = false
			r.mu.Unlock()
			continue
		}
		r.running.Add(-1) // before another may start
		r.active = false
		r.mu.Unlock()
		return
	}
}

// TestOnReadyWakesAReaderWithoutAGoroutine: readers that never block in
// Next, only leave a callback, get every frame of concurrent publishers
// in order, and the hub's close ends each.
func TestOnReadyWakesAReaderWithoutAGoroutine(t *testing.T) {
	h := NewHub(Limits{Frames: 1 << 20, Bytes: 1 << 30})
	const readers, publishers, frames = 6, 3, 2000
	rs := make([]*onDemandReader, readers)
	for i := range rs {
		rs[i] = &onDemandReader{s: h.Subscribe([]synccore.Frame{{Kind: synccore.FrameHello}}), done: make(chan struct{})}
		rs[i].kick()
	}
	var wg sync.WaitGroup
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < frames; i++ {
				// Not a delta: each is a frame of its own, never folded.
				h.Publish(synccore.Frame{Kind: synccore.FramePart})
				if i%100 == 0 {
					time.Sleep(time.Millisecond) // let readers go idle and park
				}
			}
		}()
	}
	wg.Wait()
	h.Close()
	for i, r := range rs {
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("reader %d never saw the end (seen %d)", i, r.seen)
		}
		if r.err != nil {
			t.Fatalf("reader %d: %v", i, r.err)
		}
		if r.seen != publishers*frames+1 {
			t.Fatalf("reader %d saw %d frames, want %d", i, r.seen, publishers*frames+1)
		}
		if r.started.Load() < 2 {
			t.Fatalf("reader %d ran once: it never parked", i)
		}
	}
}

// TestOnReadyCalls: a callback left with nothing queued runs once, on the
// next publish; one left with frames queued, or after Close, runs at once.
func TestOnReadyCalls(t *testing.T) {
	h := NewHub(Limits{})
	s := h.Subscribe(nil)
	var calls atomic.Int32
	s.OnReady(func() { calls.Add(1) })
	if calls.Load() != 0 {
		t.Fatal("called with nothing queued")
	}
	h.Publish(delta("a"))
	h.Publish(delta("b"))
	if got := calls.Load(); got != 1 {
		t.Fatalf("called %d times over two publishes, want once", got)
	}
	s.OnReady(func() { calls.Add(1) })
	if got := calls.Load(); got != 2 {
		t.Fatal("not called at once with frames queued")
	}
	if fs, err := s.Poll(); err != nil || len(fs) != 2 || fs[0].Text != "a" || fs[1].Text != "b" {
		t.Fatalf("poll: %+v, %v", fs, err)
	}
	if fs, err := s.Poll(); err != nil || len(fs) != 0 {
		t.Fatalf("empty poll: %+v, %v", fs, err)
	}
	s.OnReady(func() { calls.Add(1) })
	s.Close()
	if got := calls.Load(); got != 3 {
		t.Fatal("Close did not call the callback left")
	}
	if _, err := s.Poll(); !errors.Is(err, io.EOF) {
		t.Fatalf("poll after close: %v", err)
	}
}
