// Package fanout delivers a session's frames to its subscribers without ever
// blocking the session: every subscriber has its own bounded queue, and one
// that falls too far behind is told to resynchronise instead of slowing
// everyone down or growing memory.
package fanout

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentsync/agentsync/synccore"
)

// DefaultQueueLimit bounds a subscriber's queue, in frames, when NewHub
// gets 0.
const DefaultQueueLimit = 4096

// DefaultQueueBytes bounds the delta text a subscriber's queue holds when
// NewHub gets 0: deltas wait folded (Subscriber), a stream of them one
// frame per FoldLimit bytes, so the frame count alone no longer bounds
// what they hold. (Message and part frames are bounded by their count and
// the size of a message.)
const DefaultQueueBytes = 16 << 20

// Limits bound one subscriber's queue; a subscriber that would pass either
// is resynced. Zero fields take the defaults.
type Limits struct {
	Frames int // frames queued (DefaultQueueLimit)
	Bytes  int // bytes of delta text queued (DefaultQueueBytes)
	// Fold bounds the text of a folded delta (FoldLimit when 0); -1 turns
	// folding off, so that every delta is delivered as published (for
	// benchmarks that count frames, or clients that want every delta).
	Fold int
	// OnResync, if set, is called with the code of every resync frame a
	// subscriber is ended with (a metric); it must not block.
	OnResync func(code string)
	// Pacer, if set, paces the hub's deliveries (shared by the hubs of a
	// node); nil delivers every batch at once.
	Pacer *Pacer
}

// ResyncSlowConsumer is the code of the resync frame a subscriber gets when
// its queue overflows.
const ResyncSlowConsumer = "slow_consumer"

// ResyncOwnerChanged is the code of the resync frame every subscriber of a
// session gets when this node stops or starts serving it (another node
// took its lease, or this one took it from another): what the subscriber
// saw may miss the other node's commits, so it re-reads the snapshot.
const ResyncOwnerChanged = "owner_changed"

// Hub is the set of subscribers of one session. Publish is safe for
// concurrent use, but callers that need a total order between Subscribe's
// initial frames and later frames (the session engine) serialise both under
// their own lock.
type Hub struct {
	limits Limits

	mu     sync.Mutex // guards closed and writes of subs
	closed bool
	// subs is copy-on-write so Publish reads it without taking mu.
	subs atomic.Pointer[[]*Subscriber]

	paced paced // what Limits.Pacer holds back (paced.go)
}

// NewHub returns a hub whose subscribers queue at most l's frames and bytes.
func NewHub(l Limits) *Hub {
	if l.Frames <= 0 {
		l.Frames = DefaultQueueLimit
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultQueueBytes
	}
	if l.Fold == 0 {
		l.Fold = FoldLimit
	}
	h := &Hub{limits: l}
	h.subs.Store(&[]*Subscriber{})
	return h
}

// Subscribe registers a new subscriber whose first frames are initial
// (numbered from 1: the hello comes first). On a closed hub the subscriber
// gets initial and then ends.
func (h *Hub) Subscribe(initial []synccore.Frame) *Subscriber {
	s := newSubscriber(h, h.limits)
	s.enqueueInitial(initial)
	// initial holds what was published before it, held back or not: the
	// subscribers already there get that first, the new one never.
	h.paced.mu.Lock()
	defer h.paced.mu.Unlock()
	h.flushLocked()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.end()
		return s
	}
	cur := *h.subs.Load()
	next := make([]*Subscriber, len(cur), len(cur)+1)
	copy(next, cur)
	next = append(next, s)
	h.subs.Store(&next)
	h.limits.Pacer.add(1)
	return s
}

// Publish queues frames for every subscriber. It never blocks on a
// subscriber: one whose queue would pass the limit is dropped with a resync
// frame. The frames' Seq fields are set per subscriber (the caller's are
// ignored); pointers inside the frames are shared and must not be mutated
// after publishing. With a Pacer the frames may be held back a little
// (paced.go), never reordered.
func (h *Hub) Publish(frames ...synccore.Frame) {
	if len(frames) == 0 {
		return
	}
	if h.limits.Pacer != nil {
		h.publishPaced(frames)
		return
	}
	h.deliver(frames)
}

// deliver queues frames for every subscriber now.
func (h *Hub) deliver(frames []synccore.Frame) {
	subs := *h.subs.Load()
	// Frames going to more than one subscriber are encoded once for all
	// of them (Shared); one subscriber encodes its own, as it would anyway.
	var shared []Shared
	if len(subs) > 1 {
		shared = make([]Shared, len(frames))
	}
	for _, s := range subs {
		if !s.enqueue(frames, shared) {
			h.remove(s)
		}
	}
}

// Shared is what the subscribers of a hub share of one published frame:
// its encoding, made once, by whichever subscriber's writer needs it
// first, for all of them (Encode). It is the frame's, not a subscriber's:
// each subscriber's copy of the frame differs in Seq, and the writer
// splices Seq in (api's frame encoder). A subscriber whose copy of the
// frame changed (a delta folded into it, a text cut by ?kept=1) has no
// Shared for it.
type Shared struct {
	done atomic.Bool
	mu   sync.Mutex // held while the first caller encodes
	b    []byte
	err  error
}

// Encode returns enc(f), calling enc only the first time: every caller
// passes its copy of the same published frame, and an enc that ignores
// what differs between copies (Seq).
func (s *Shared) Encode(f *synccore.Frame, enc func(*synccore.Frame) ([]byte, error)) ([]byte, error) {
	if !s.done.Load() {
		s.mu.Lock()
		if !s.done.Load() {
			s.b, s.err = enc(f)
			s.done.Store(true)
		}
		s.mu.Unlock()
	}
	return s.b, s.err
}

// Len is the number of live subscribers.
func (h *Hub) Len() int { return len(*h.subs.Load()) }

// Close ends every subscription: each gets what is already published,
// then io.EOF. Later Subscribe calls get only their initial frames.
func (h *Hub) Close() {
	h.paced.mu.Lock()
	h.flushLocked()
	h.paced.stop()
	h.paced.mu.Unlock()
	h.mu.Lock()
	h.closed = true
	cur := *h.subs.Load()
	h.subs.Store(&[]*Subscriber{})
	h.limits.Pacer.add(-len(cur))
	h.mu.Unlock()
	for _, s := range cur {
		s.end()
	}
}

// Resync ends every subscription with a resync frame (code, reason); the
// hub stays open for new subscribers.
func (h *Hub) Resync(code, reason string) {
	h.paced.mu.Lock()
	h.paced.drop() // every subscriber re-reads the snapshot, which has it
	h.paced.mu.Unlock()
	h.mu.Lock()
	cur := *h.subs.Load()
	h.subs.Store(&[]*Subscriber{})
	h.limits.Pacer.add(-len(cur))
	h.mu.Unlock()
	for _, s := range cur {
		s.mu.Lock()
		if !s.ended && !s.closed {
			s.resyncLocked(code, reason)
		}
		s.wakeUnlock()
	}
}

// remove unregisters s; it is idempotent.
func (h *Hub) remove(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := *h.subs.Load()
	i := slices.Index(cur, s)
	if i < 0 {
		return
	}
	next := make([]*Subscriber, 0, len(cur)-1)
	next = append(next, cur[:i]...)
	next = append(next, cur[i+1:]...)
	h.subs.Store(&next)
	h.limits.Pacer.add(-1)
}
