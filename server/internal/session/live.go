package session

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/server/internal/cluster"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/natsfan"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// live is one session in memory. mu orders everything that changes it:
// commits, publishes and subscriptions, so a subscriber's hello and
// projection are exactly the state the frames after them build on.
type live struct {
	m     *Manager
	id    string
	owner string // never changes: read without mu
	hub   *fanout.Hub
	log   *slog.Logger

	// Guarded by m.mu (evict.go): uses in progress, last release, place
	// in the manager's recency list (nil once unloaded).
	pins     int
	lastUsed time.Time
	lru      *list.Element

	mu      sync.Mutex
	rec     store.Session      // mirrors the store's row; HeadSequence is ours to advance
	turn    *turn              // the running turn, nil when idle
	queued  []queuedTurn       // messages waiting for the running turn to end (post.go)
	closing bool               // shutting down: no new turns
	own     *cluster.Ownership // the session's lease, in a cluster (cluster.go); nil when not served here
	pub     *natsfan.Publisher // publishes the frames to other nodes while served here with NATS (follow.go)

	// With NATS, the follow of the session while another node serves it
	// and this one has subscribers of it (follow.go). followMu orders
	// starts of a follow; follow is read without mu by unload.
	followMu sync.Mutex
	follow   atomic.Pointer[natsfan.Follower]
}

func (s *live) subscribe() (*fanout.Subscriber, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, errStopping
	}
	return s.hub.Subscribe(s.joinFrames(false)), nil
}

// joinFrames is where a subscriber joining now starts: hello, then the
// streaming projection (the mid-stream join). withOpen adds the streaming
// message's committed revision before the projection, which a follower
// on another node builds on (follow.go). Caller holds s.mu.
func (s *live) joinFrames(withOpen bool) []synccore.Frame {
	frames := []synccore.Frame{{
		Kind:         synccore.FrameHello,
		Protocol:     synccore.ProtocolVersion,
		SessionID:    s.id,
		HeadSequence: s.rec.HeadSequence,
	}}
	if t := s.turn; t != nil && t.agent != nil && !t.agent.closed() {
		if withOpen {
			frames = append(frames, synccore.Frame{Kind: synccore.FrameMessage, Message: t.agent.committed})
		}
		frames = t.agent.projectionFrames(frames)
	}
	return frames
}

// shutdown cancels the running turn; its goroutine closes the message.
func (s *live) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	if s.turn != nil {
		s.turn.cancel(errShutdown)
	}
}

// commitNew commits a new message (user message, or an agent message of its
// own) at the next sequence and publishes it. Caller holds s.mu.
func (s *live) commitNew(ctx context.Context, msg synccore.Message) (*synccore.Message, error) {
	return s.commitNewUnder(ctx, s.own, msg)
}

// commitNewUnder is commitNew under the lease o (a turn's, epoch.go).
// Caller holds s.mu.
func (s *live) commitNewUnder(ctx context.Context, o *cluster.Ownership, msg synccore.Message) (*synccore.Message, error) {
	msg.SessionID = s.id
	msg.Sequence = s.rec.HeadSequence + 1
	msg.Revision = 1
	if msg.CreatedAt == 0 {
		msg.CreatedAt = s.m.now()
	}
	batch := []synccore.Message{msg}
	if err := s.commitUnder(ctx, o, batch); err != nil {
		return nil, fmt.Errorf("session %s: commit message %d: %w", s.id, msg.Sequence, err)
	}
	s.rec.HeadSequence = msg.Sequence
	out := &batch[0]
	s.publishMessage(out)
	if msg.Sequence == s.rec.ForkSequence {
		// A fork counts among its siblings' alternatives from its first
		// own message on (store.Forker.Branches).
		s.m.treeChanged(s.rec)
	}
	return out, nil
}

// publishMessage sends a committed snapshot; msg must never be mutated
// afterwards (subscribers share it).
func (s *live) publishMessage(msg *synccore.Message) {
	s.publish(synccore.Frame{Kind: synccore.FrameMessage, Message: msg})
}

// publish sends frames to this node's subscribers of the session and,
// with NATS, to the other nodes' (follow.go). Caller holds s.mu.
func (s *live) publish(frames ...synccore.Frame) {
	s.hub.Publish(frames...)
	if s.pub != nil {
		s.pub.Send(frames)
	}
}

// commitAgent commits the working copy of the turn's agent message as its
// next revision with the given state, then publishes it. Caller holds s.mu.
func (s *live) commitAgent(ctx context.Context, a *agentMsg, state synccore.MessageState) (*synccore.Message, error) {
	full, changed := a.snapshot(state)
	delta := *full
	delta.Parts = changed
	if err := s.commitUnder(ctx, a.own, []synccore.Message{delta}); err != nil {
		return nil, fmt.Errorf("session %s: commit agent message %d revision %d: %w", s.id, full.Sequence, full.Revision, err)
	}
	a.committedAs(full)
	s.publishMessage(full)
	return full, nil
}
