package natsfan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/synccore"
)

// SnapshotTimeout bounds the wait for the owner's snapshot when a follow
// starts.
const SnapshotTimeout = 2 * time.Second

// Follower feeds one session's frames, published by the node that serves
// it, to this node's fan-out hub of that session.
type Follower struct {
	b   *Bus
	hub *fanout.Hub
	sub bus.Subscription

	mu      sync.Mutex
	started bool     // the snapshot is in the mirror; batches apply at once
	pending [][]byte // batches that came before the snapshot
	owned   bool     // a node served the session when the follow started
	epoch   int64
	counter uint64 // of the last batch applied
	mirror  mirror
	ended   bool
}

// ErrUnavailable refuses a follow while the NATS connection is down: a
// retryable 503 for the subscriber.
var ErrUnavailable = synccore.Errorf(synccore.CodeClosed, "this node cannot reach NATS to stream a session another node serves: retry")

// Follow starts following a session for its subscribers on this node,
// whose hub is hub, and subscribes the first of them. It subscribes to the
// session's frames, then asks the owner for its snapshot. If no node
// serves the session, the subscriber starts from committedHead (the
// committed snapshot) and the follow ends, with a resync, at the first
// batch of the session's next owner.
func (b *Bus) Follow(ctx context.Context, sessionID string, hub *fanout.Hub, committedHead func(context.Context) (int64, error)) (*Follower, *fanout.Subscriber, error) {
	if err := checkID(sessionID); err != nil {
		return nil, nil, err
	}
	if !b.Connected() {
		return nil, nil, ErrUnavailable
	}
	f := &Follower{b: b, hub: hub, mirror: mirror{sessionID: sessionID}}
	sub, err := b.nc.Subscribe(framesPrefix+sessionID, f.receive)
	if err != nil {
		return nil, nil, fmt.Errorf("natsfan: follow session %s: %w: %w", sessionID, err, ErrUnavailable)
	}
	f.sub = sub
	fail := func(err error) (*Follower, *fanout.Subscriber, error) {
		_ = sub.Unsubscribe()
		return nil, nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, SnapshotTimeout)
	defer cancel()
	// The subscription must be live at the server before the snapshot is
	// taken, or batches between the two would be missed.
	if err := b.nc.Flush(rctx); err != nil {
		return fail(fmt.Errorf("natsfan: follow session %s: %w: %w", sessionID, err, ErrUnavailable))
	}
	var snap batch
	reply, err := b.nc.Request(rctx, snapshotPrefix+sessionID, nil)
	switch {
	case errors.Is(err, bus.ErrNoResponders) || (err == nil && len(reply.Data) == 0): // nobody serves it
		head, err := committedHead(ctx)
		if err != nil {
			return fail(err)
		}
		snap.body = wire.EncodeFrames([]synccore.Frame{{Kind: synccore.FrameHello, HeadSequence: head}})
	case err != nil:
		return fail(fmt.Errorf("natsfan: snapshot of session %s: %w: %w", sessionID, err, ErrUnavailable))
	default:
		if snap, err = readBatch(reply.Data); err != nil {
			return fail(err)
		}
		if snap.marker() {
			return fail(fmt.Errorf("natsfan: session %s: the snapshot is too large for NATS (max_payload): %w", sessionID, ErrUnavailable))
		}
		f.owned = true
	}
	frames, err := snap.frames()
	if err == nil {
		err = f.mirror.apply(frames)
	}
	if err != nil {
		return fail(fmt.Errorf("natsfan: snapshot of session %s: %w", sessionID, err))
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch, f.counter, f.started = snap.epoch, snap.counter, true
	first := hub.Subscribe(f.mirror.join())
	for _, data := range f.pending {
		f.applyLocked(data)
	}
	f.pending = nil
	if f.ended {
		// The batches after the snapshot ended it already: first got a
		// resync.
		return f, first, nil
	}
	b.track(f)
	return f, first, nil
}

// Subscribe adds a subscriber starting at the follow's current state;
// false once the follow ended (start a new one).
func (f *Follower) Subscribe() (*fanout.Subscriber, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return nil, false
	}
	return f.hub.Subscribe(f.mirror.join()), true
}

// Ended reports whether the follow ended.
func (f *Follower) Ended() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

// Stop ends the follow without a word to its subscribers: the caller
// (this node taking the session over, or unloading it) deals with them.
// No batch reaches the hub once it returns.
func (f *Follower) Stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopLocked()
}

// end ends the follow and resyncs its subscribers.
func (f *Follower) end(code, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.ended {
		f.stopLocked()
		f.hub.Resync(code, reason)
	}
}

func (f *Follower) stopLocked() {
	if f.ended {
		return
	}
	f.ended = true
	_ = f.sub.Unsubscribe()
	f.b.untrack(f)
}

// receive is the NATS handler of the session's batches (one goroutine,
// in the order the server got them).
func (f *Follower) receive(msg *bus.Msg) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started {
		f.pending = append(f.pending, msg.Data)
		return
	}
	f.applyLocked(msg.Data)
}

// applyLocked applies one batch in counter order, or ends the follow
// (with a resync) when it cannot. Caller holds f.mu.
func (f *Follower) applyLocked(data []byte) {
	if f.ended {
		return
	}
	lost := func(reason string) {
		f.stopLocked()
		f.hub.Resync(fanout.ResyncOwnerChanged, reason)
	}
	bt, err := readBatch(data)
	switch {
	case err != nil:
		lost("unreadable frames from the node serving the session: re-read the snapshot")
		return
	case !f.owned:
		lost("a node now serves the session: re-read the snapshot")
		return
	case bt.epoch < f.epoch:
		return // a node that lost the lease and does not know yet
	case bt.epoch > f.epoch:
		lost("another node now serves the session: re-read the snapshot")
		return
	case bt.marker():
		lost("the node serving the session could not publish some frames: re-read the snapshot")
		return
	case bt.counter <= f.counter:
		return // the snapshot holds it
	case bt.counter != f.counter+1:
		lost(fmt.Sprintf("frames %d to %d from the node serving the session were lost: re-read the snapshot", f.counter+1, bt.counter-1))
		return
	}
	frames, err := bt.frames()
	if err == nil {
		err = f.mirror.apply(frames)
	}
	if err != nil {
		f.b.log.Warn("frames do not follow on", "err", err)
		lost("frames from the node serving the session do not follow on: re-read the snapshot")
		return
	}
	f.counter = bt.counter
	if f.hub.Len() == 0 {
		f.stopLocked() // nobody here follows the session any more
		return
	}
	f.hub.Publish(frames...)
	for _, fr := range frames {
		if fr.Kind == synccore.FrameError {
			// The session is gone (deleted): its subscribers close on
			// this frame, and there is nothing more to follow.
			f.stopLocked()
		}
	}
}
