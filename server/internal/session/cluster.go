package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/internal/cluster"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Several nodes on one database (Config.Cluster): a node serves a session
// (runs its turns, commits for it, publishes its frames) only while it
// holds the session's lease (cluster.Keeper, store.Leaser). Every use that
// may change a session (post, answer, action, delete; subscribe too
// without NATS) goes through served(), which claims the lease first; a
// session another live node holds is refused with CodeConflict naming that
// node. Its commits go through the lease (CommitLeased), so a node that
// lost the lease without noticing is fenced by the database. Reads of the
// committed snapshot (pages, history, digest) need no lease.
//
// With NATS (ClusterConfig.NATS, follow.go) frames cross nodes: the node
// serving a session publishes them, any other node streams the session to
// its own subscribers, so a subscription needs no lease. A refusal is an
// *OwnedElsewhere: the API forwards the request to that node when the
// cluster has NATS (server/internal/forward), and answers the 409
// otherwise.

// ClusterConfig makes a Manager one node of several sharing its Store.
type ClusterConfig struct {
	// Node names this node, unique among the live nodes.
	Node string
	// LeaseTTL bounds how long a dead node's sessions wait for another
	// node (default 5 s); leases are renewed every third of it.
	LeaseTTL time.Duration
	// NATS, if set, carries frames between the nodes (follow.go): a
	// subscription then needs no lease, any node streams any session.
	// The caller connects it (with reconnects on) and closes it after
	// the manager's Shutdown.
	NATS bus.Conn
}

// OwnedElsewhere refuses a use of a session whose lease another live node
// holds: to a client it is the typed CodeConflict it unwraps to (409, naming
// the node); to the API it says where to forward the request.
type OwnedElsewhere struct {
	SessionID string
	Node      string    // the node serving the session
	Expires   time.Time // its lease's expiry, by the store's clock, unless renewed
	typed     *synccore.Error
}

func (e *OwnedElsewhere) Error() string { return e.typed.Error() }
func (e *OwnedElsewhere) Unwrap() error { return e.typed }

// errLeaseLost cancels a turn whose node lost the session's lease. It is a
// shutdown for the turn's ending: the message is left to the new owner's
// recovery (the closing commit is fenced), no unread message is answered.
var errLeaseLost = fmt.Errorf("this node lost the session's lease: %w", errShutdown)

// interruptedPart is the error part closing an agent message whose node
// stopped mid-turn (a crash, or another node's death found at takeover).
func interruptedPart(synccore.Message) synccore.Part {
	return synccore.Part{
		Type:        synccore.PartError,
		Scope:       synccore.ErrorScopeTurn,
		Code:        CodeInterrupted,
		Message:     "the server stopped before this message was finished",
		Recoverable: true,
	}
}

// claim makes this node the session's server if it is not already: it
// takes the lease (a previous owner's open message is closed, the session's
// row re-read since other nodes may have committed), and resyncs the local
// subscribers, who may have missed those commits. Without a cluster it does
// nothing.
func (s *live) claim(ctx context.Context) error {
	k := s.m.keeper
	if k == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own != nil {
		// Valid by the local clock, or renewed now: a node paused past
		// its lease must not serve a queued request from its memory.
		if s.own.Confirm(ctx) == nil {
			return nil
		}
		s.dropLease() // lost, and its watcher has not run yet
	}
	o, recovered, err := k.Own(ctx, s.id, interruptedPart)
	if err != nil {
		var held *store.LeaseHeld
		var se *synccore.Error
		if errors.As(err, &held) && errors.As(err, &se) {
			return &OwnedElsewhere{SessionID: s.id, Node: held.Node, Expires: held.Expires,
				typed: synccore.Errorf(synccore.CodeConflict, "%s: node %q does not serve it; send the session's requests there", se.Message, s.m.node)}
		}
		var typed *synccore.Error
		if errors.As(err, &typed) || ctx.Err() != nil {
			return fmt.Errorf("session %s: take its lease: %w", s.id, err)
		}
		return s.m.retryLater(s.id, fmt.Errorf("take its lease: %w", err))
	}
	rec, err := s.m.store.Session(ctx, s.id)
	if err != nil {
		_ = o.Release(ctx)
		return fmt.Errorf("session %s: read it on taking its lease: %w", s.id, err)
	}
	s.rec, s.own = rec, o
	s.m.obs.LeaseAcquired(len(recovered) > 0)
	s.startPublishing(o)
	for i := range recovered {
		s.publishMessage(&recovered[i])
	}
	s.hub.Resync(fanout.ResyncOwnerChanged, "this node now serves the session: re-read the snapshot")
	go s.watchLease(o)
	return nil
}

// watchLease waits for the loss of o (another node took the lease, renewals
// failed past its expiry, a commit was fenced, or it was released): the
// session's turn stops and its subscribers here re-read the snapshot.
func (s *live) watchLease(o *cluster.Ownership) {
	<-o.LostC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own == o {
		s.dropLease()
	}
}

// dropLease stops serving the session after its lease was lost. Caller
// holds s.mu.
func (s *live) dropLease() {
	s.own = nil
	s.stopPublishing()
	if s.turn != nil {
		s.turn.cancel(errLeaseLost)
	}
	if !s.closing { // a deleted or stopping session's hub ends otherwise
		s.hub.Resync(fanout.ResyncOwnerChanged, "this node no longer serves the session: re-read the snapshot")
	}
}

// commitUnder writes a batch of the session's messages: in a cluster,
// under the lease o, which must still be the one this node serves the
// session under. A turn passes the lease it began under, so nothing of an
// older epoch lands once the node lost the session, not even after it
// took the session back at a newer epoch (the new epoch's recovery closed
// what the old turn left). A refusal is store.ErrLeaseLost. Caller holds
// s.mu.
func (s *live) commitUnder(ctx context.Context, o *cluster.Ownership, batch []synccore.Message) (err error) {
	if s.m.keeper != nil && (o == nil || o != s.own) {
		return fmt.Errorf("session %q: node %q no longer serves it under this lease: %w", s.id, s.m.node, store.ErrLeaseLost)
	}
	ctx, span := s.m.startSpan(ctx, "commit")
	if span != nil {
		span.SetString("agentsync.store", s.m.storeName)
		span.SetInt("agentsync.messages", int64(len(batch)))
		defer func() { span.End(err) }()
	}
	began := time.Now()
	if s.m.keeper == nil {
		err = s.m.store.Commit(ctx, s.id, batch)
	} else {
		err = o.Commit(ctx, batch)
	}
	s.m.obs.Commit(s.m.storeName, time.Since(began), err == nil)
	return err
}

// releaseLease gives up the session's lease when it leaves memory, so
// another node may serve it at once; if it comes back here first, it
// takes the lease again (cluster.Keeper.Forget). Caller holds m.mu.
func (s *live) releaseLease() {
	if s.m.keeper != nil {
		s.m.keeper.Forget(s.id)
	}
}
