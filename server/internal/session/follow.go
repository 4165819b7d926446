package session

import (
	"context"

	"github.com/agentsync/agentsync/server/internal/cluster"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/synccore"
)

// Frames across nodes (ClusterConfig.NATS, server/internal/natsfan): the
// node that serves a session publishes its frames, and any other node
// streams the session to its own subscribers by following them, so a
// subscription needs no lease. Without NATS, subscribing claims the
// lease as every other use does (cluster.go).

// subscribeAnywhere subscribes on this node whether or not it serves the
// session: locally when it does, else through a follow of the node that
// does (one per session, shared by this node's subscribers of it).
func (s *live) subscribeAnywhere(ctx context.Context) (*fanout.Subscriber, error) {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	for {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return nil, errStopping
		}
		if s.own != nil && s.own.Lost() {
			s.dropLease()
		}
		if s.own != nil {
			defer s.mu.Unlock()
			return s.hub.Subscribe(s.joinFrames(false)), nil
		}
		f := s.follow.Load()
		s.mu.Unlock()
		if f != nil {
			if sub, ok := f.Subscribe(); ok {
				return sub, nil
			}
		}
		f, sub, err := s.m.bus.Follow(ctx, s.id, s.hub, s.committedHead)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		if s.own != nil || s.closing {
			// This node took the session meanwhile (its claim resynced
			// sub): subscribe again, locally.
			s.mu.Unlock()
			f.Stop()
			sub.Close()
			continue
		}
		s.follow.Store(f)
		s.mu.Unlock()
		return sub, nil
	}
}

// committedHead is the session's head sequence in the store: where a
// subscriber of a session no node serves starts.
func (s *live) committedHead(ctx context.Context) (int64, error) {
	rec, err := s.m.store.Session(ctx, s.id)
	return rec.HeadSequence, err
}

// stopFollow ends this node's follow of the session, if any: it takes
// the session over, or unloads it. Safe with or without s.mu.
func (s *live) stopFollow() {
	if f := s.follow.Swap(nil); f != nil {
		f.Stop()
	}
}

// startPublishing publishes the session's frames to the other nodes from
// now on, under the lease o, and answers their snapshot requests. Caller
// holds s.mu.
func (s *live) startPublishing(o *cluster.Ownership) {
	if s.m.bus == nil {
		return
	}
	s.stopFollow()
	p, err := s.m.bus.Publish(s.id, o.Lease().Epoch, func() (uint64, []synccore.Frame, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		// A closing session (deleted, or the server stopping) answers no
		// snapshot: a follower then reads the store, as of a session no
		// node serves, and finds it gone.
		// Nor does a node whose lease is past its local validity (it was
		// paused): its memory may be behind the session's new owner.
		if s.own != o || s.pub == nil || s.closing || !o.Valid() {
			return 0, nil, false
		}
		return s.pub.Counter(), s.joinFrames(true), true
	})
	if err != nil {
		// Other nodes' subscribers of the session wait for their follow
		// to fail (no snapshot) and retry; this node serves it anyway.
		s.log.Warn("publish frames to other nodes", "err", err)
		return
	}
	s.pub = p
}

// stopPublishing stops publishing to other nodes. Caller holds s.mu.
func (s *live) stopPublishing() {
	if s.pub != nil {
		s.pub.Close()
		s.pub = nil
	}
}
