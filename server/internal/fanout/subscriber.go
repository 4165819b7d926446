package fanout

import (
	"context"
	"io"
	"sync"

	"github.com/agentsync/agentsync/synccore"
)

// Subscriber is one subscription's bounded frame queue. One goroutine at a
// time (the connection's writer) calls Next or Poll; any goroutine may
// call Close.
//
// A delta queued behind an unread delta that it continues (same message,
// revision and part, its offset where the other's text ends) is folded into
// it, up to FoldLimit bytes: a reader that falls behind a fast model gets
// the text it missed in a few large deltas, in one WebSocket message,
// instead of being resynced and re-reading the whole message (a long
// answer's snapshot) each time it falls behind. Seq numbers stay gapless:
// a folded delta takes none. A reader that keeps up reads every delta as
// it was published.
type Subscriber struct {
	hub    *Hub
	limits Limits

	// signal has room for one token: Publish never blocks on it, and one
	// token is enough to wake Next, which then takes everything queued.
	signal chan struct{}

	mu    sync.Mutex
	ready func() // OnReady's callback, called once by the next wake
	queue []synccore.Frame
	spare []synccore.Frame // the slice Next returned last time, reused
	// shared parallels queue (and sharedSpare spare) once a frame with a
	// Shared encoding is queued: nil entries (or a shorter slice) are
	// frames of this subscriber's own (initial, folded, resync).
	shared      []*Shared
	sharedSpare []*Shared
	seq         uint64 // Seq of the last frame queued
	delivered   uint64 // Seq of the last frame handed out by Next
	ended       bool   // no more frames are queued (resync, hub closed)
	closed      bool   // Close was called: Next returns io.EOF at once
	bytes       int    // bytes of delta text queued (Limits.Bytes)

	// folding: the last queued frame is an unread delta others may fold
	// into. fold holds its text with theirs appended, from the first fold
	// on (empty until then: a reader that keeps up costs no copy); the
	// delta's Text is set from it when Next hands it out or another frame
	// follows it.
	folding bool
	fold    []byte
}

// FoldLimit bounds the text of a delta that others were folded into,
// unless Limits.Fold says otherwise.
const FoldLimit = 64 << 10

func newSubscriber(h *Hub, limits Limits) *Subscriber {
	return &Subscriber{hub: h, limits: limits, signal: make(chan struct{}, 1)}
}

func (s *Subscriber) enqueueInitial(frames []synccore.Frame) {
	s.mu.Lock()
	s.pushLocked(frames, nil)
	s.wakeUnlock()
}

// pushLocked numbers frames in the subscription's gapless seq and queues
// them, folding deltas into an unread one they continue; shared, if not
// nil, holds the frames' shared encodings. s.mu is held.
func (s *Subscriber) pushLocked(frames []synccore.Frame, shared []Shared) {
	for i, f := range frames {
		if s.folds(&f) {
			if len(s.fold) == 0 {
				s.fold = append(s.fold, s.queue[len(s.queue)-1].Text...)
				if n := len(s.queue) - 1; n < len(s.shared) {
					s.shared[n] = nil // its text is no longer the published one
				}
			}
			s.fold = append(s.fold, f.Text...)
			s.bytes += len(f.Text)
			continue
		}
		s.closeFoldLocked()
		s.seq++
		f.Seq = s.seq
		s.queue = append(s.queue, f)
		if shared != nil {
			for len(s.shared) < len(s.queue)-1 {
				s.shared = append(s.shared, nil)
			}
			s.shared = append(s.shared, &shared[i])
		}
		if f.Kind == synccore.FrameDelta {
			s.bytes += len(f.Text)
			s.folding = true
		}
	}
}

// folds reports whether delta f continues the unread delta at the queue's
// end and fits in it.
func (s *Subscriber) folds(f *synccore.Frame) bool {
	if !s.folding || f.Kind != synccore.FrameDelta {
		return false
	}
	return continues(&s.queue[len(s.queue)-1], len(s.fold), f, s.limits.Fold)
}

// continues reports whether delta f continues delta last, whose text
// with the texts folded into it is max(len(last.Text), folded) bytes,
// and fits with it in limit bytes.
func continues(last *synccore.Frame, folded int, f *synccore.Frame, limit int) bool {
	n := max(folded, len(last.Text))
	return n+len(f.Text) <= limit && f.MessageID == last.MessageID && f.Revision == last.Revision &&
		f.PartID == last.PartID && f.Offset == last.Offset+int64(n)
}

// closeFoldLocked gives the folded delta at the queue's end its text;
// s.mu is held.
func (s *Subscriber) closeFoldLocked() {
	if !s.folding {
		return
	}
	s.folding = false
	if len(s.fold) > 0 {
		s.queue[len(s.queue)-1].Text = string(s.fold)
	}
	s.dropFold()
}

// dropFold empties the fold buffer, and lets go of one that folds made
// large: a subscriber that fell behind once must not keep a buffer of
// its size while it idles.
func (s *Subscriber) dropFold() {
	s.fold = s.fold[:0]
	if cap(s.fold) > keptBytes {
		s.fold = nil
	}
}

// keptFrames and keptBytes bound what an idle subscriber keeps of the
// queue and fold buffers a burst grew (a frame is about 200 bytes).
const (
	keptFrames = 64
	keptBytes  = 4 << 10
)

// enqueue appends frames, numbering them; it reports false once the
// subscriber is finished and should leave the hub.
func (s *Subscriber) enqueue(frames []synccore.Frame, shared []Shared) bool {
	s.mu.Lock()
	if s.ended || s.closed {
		s.mu.Unlock()
		return false
	}
	s.pushLocked(frames, shared)
	if len(s.queue) > s.limits.Frames || s.bytes > s.limits.Bytes {
		s.resyncLocked(ResyncSlowConsumer, "subscriber queue overflow: re-read the snapshot")
		s.wakeUnlock()
		return false
	}
	s.wakeUnlock()
	return true
}

// resyncLocked drops what the subscriber has not read (the client
// re-reads the snapshot anyway) and ends it with a resync frame that
// follows the last frame it did read, so its seq is continuous. A hello
// not read yet stays in front of it: a client must get hello first, and
// would take a subscription opening on anything else for a broken one.
// Caller holds s.mu.
func (s *Subscriber) resyncLocked(code, reason string) {
	keep := 0
	if s.delivered == 0 && len(s.queue) > 0 && s.queue[0].Kind == synccore.FrameHello {
		keep = 1
	}
	s.folding = false
	s.dropFold()
	clear(s.queue[keep:])
	clear(s.shared)
	s.shared = s.shared[:0]
	s.bytes = 0
	s.seq = s.delivered + uint64(keep) + 1
	s.queue = append(s.queue[:keep], synccore.Frame{
		Seq:    s.seq,
		Kind:   synccore.FrameResync,
		Code:   code,
		Reason: reason,
	})
	s.ended = true
	if s.limits.OnResync != nil {
		s.limits.OnResync(code)
	}
}

// end stops the queue from growing; Next drains what is left, then EOF.
func (s *Subscriber) end() {
	s.mu.Lock()
	s.ended = true
	s.wakeUnlock()
}

// wakeUnlock releases s.mu and wakes the reader: a Next waiting, or the
// callback OnReady left.
func (s *Subscriber) wakeUnlock() {
	f := s.ready
	s.ready = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// OnReady arranges for f to be called once, the next time a frame is
// queued or the subscriber ends or is closed, or at once if Poll has
// something to return already. f runs on the goroutine that queued the
// frame (a hub's publisher), so it must not block: it starts the writer.
// This is how a writer waits without a goroutine of its own (an idle
// viewer then costs no writer stack: BenchmarkViewerMemory/idle). A later
// call replaces an f not called yet.
func (s *Subscriber) OnReady(f func()) {
	s.mu.Lock()
	if s.closed || s.ended || len(s.queue) > 0 {
		s.mu.Unlock()
		f()
		return
	}
	s.ready = f
	s.mu.Unlock()
}

// Next blocks until frames are queued and returns all of them, in order, so
// the writer can pack them into one WebSocket message. The returned slice is
// valid until the following call to Next. After a resync or the hub's close
// it returns the last frames and then io.EOF; after Close, io.EOF at once.
// A cancelled ctx returns ctx.Err().
func (s *Subscriber) Next(ctx context.Context) ([]synccore.Frame, error) {
	for {
		if frames, err := s.Poll(); len(frames) > 0 || err != nil {
			return frames, err
		}
		select {
		case <-s.signal:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Poll is Next without the wait: with nothing queued it returns no frames
// and a nil error (OnReady says when to call it again).
func (s *Subscriber) Poll() ([]synccore.Frame, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, io.EOF
	}
	if n := len(s.queue); n > 0 {
		s.closeFoldLocked()
		s.bytes = 0
		out := s.queue
		// Reuse the slice handed out last time: its reader is done with
		// it now that it called Next or Poll again.
		clear(s.spare)
		s.queue = s.spare[:0]
		s.spare = out
		clear(s.sharedSpare)
		s.shared, s.sharedSpare = s.sharedSpare[:0], s.shared
		s.delivered = out[n-1].Seq
		s.mu.Unlock()
		return out, nil
	}
	ended := s.ended
	if cap(s.spare) > keptFrames {
		// The reader is done with the last batch: a long one's slice
		// is not kept for the next.
		clear(s.spare)
		s.spare = nil
	}
	// The reader is done with the last batch's encodings too: an
	// idle subscriber keeps none (a message frame's is answer-sized).
	clear(s.sharedSpare)
	if cap(s.sharedSpare) > keptFrames {
		s.sharedSpare = nil
	}
	s.mu.Unlock()
	if ended {
		return nil, io.EOF
	}
	return nil, nil
}

// Shared returns the shared encodings of the frames the last call to
// Next or Poll returned, index by index: a nil entry, or one past the
// slice's end, is a frame of this subscriber's own, to be encoded by
// itself. Like their frames, it is valid until the following call to Next
// or Poll, from the same goroutine.
func (s *Subscriber) Shared() []*Shared {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sharedSpare
}

// Close leaves the hub and drops the queue; Next returns io.EOF.
func (s *Subscriber) Close() {
	s.mu.Lock()
	s.closed = true
	s.folding = false
	clear(s.queue)
	s.queue = nil
	s.spare = nil
	s.shared, s.sharedSpare = nil, nil
	s.mu.Unlock()
	s.hub.remove(s)
	s.mu.Lock()
	s.wakeUnlock()
}
