// Package cluster keeps the leases of the sessions one server node serves
// when several nodes share a PostgreSQL store (store.Leaser): a node owns a
// session's turn loop while it holds the session's lease, renews it in the
// background, recovers what a dead owner left streaming when it takes a
// session over, and learns at once when it lost the lease, so it stops
// serving the session. The database fences a node that did not notice
// (store.Leaser.CommitLeased).
//
// The session engine (server/internal/session, Config.Cluster) keeps one
// per node.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Config configures a Keeper.
type Config struct {
	Store store.Store
	// Node names this node; it must be unique per process (a restarted
	// node takes a new name or re-acquires, which bumps the epoch anyway).
	Node string
	// TTL is how long a lease lasts without renewal: the bound on how long
	// a dead node's sessions wait for another owner. Default 5s. Leases
	// are renewed every TTL/3.
	TTL    time.Duration
	Logger *slog.Logger
	// Observer sees every lease renewal; nil observes nothing.
	Observer obs.Observer
}

// DefaultTTL is a lease's TTL when Config.TTL is zero.
const DefaultTTL = 5 * time.Second

// Keeper holds one node's leases.
type Keeper struct {
	cfg Config
	log *slog.Logger
	obs obs.Observer

	mu    sync.Mutex
	owned map[string]*Ownership
}

// New returns a Keeper holding no lease.
func New(cfg Config) *Keeper {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Keeper{cfg: cfg, log: cfg.Logger.With("component", "cluster", "node", cfg.Node), owned: map[string]*Ownership{},
		obs: obs.Or(cfg.Observer)}
}

// Ownership is this node's hold on one session.
type Ownership struct {
	k    *Keeper
	stop context.CancelFunc
	done chan struct{} // the renewal loop ended

	mu         sync.Mutex
	lease      store.Lease
	validUntil time.Time     // local time before which no other node can take the lease
	lost       chan struct{} // closed once the lease is (or may be) lost
	once       sync.Once
}

// Own takes the session's lease for this node (store.ErrLeaseHeld if
// another node holds it), closes what a previous owner left streaming
// (store.Leaser.RecoverLeased, with mkErr's error part) and renews the
// lease until Release, Close or its loss. It returns the recovered
// messages, which the caller publishes before serving the session.
func (k *Keeper) Own(ctx context.Context, sessionID string, mkErr func(synccore.Message) synccore.Part) (*Ownership, []synccore.Message, error) {
	k.mu.Lock()
	o, ok := k.owned[sessionID]
	k.mu.Unlock()
	// An ownership not yet known lost is trusted only once confirmed: a
	// node that was paused past its lease must not serve from memory.
	if ok && o.Confirm(ctx) == nil {
		return o, nil, nil
	}
	start := time.Now()
	l, err := k.cfg.Store.AcquireLease(ctx, sessionID, k.cfg.Node, k.cfg.TTL)
	if err != nil {
		return nil, nil, err
	}
	rec, err := k.cfg.Store.RecoverLeased(ctx, l, mkErr)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: recover session %q on taking it over: %w", sessionID, err)
	}
	loopCtx, stop := context.WithCancel(context.Background())
	o = &Ownership{k: k, stop: stop, done: make(chan struct{}), lease: l, validUntil: start.Add(k.cfg.TTL),
		lost: make(chan struct{})}
	k.mu.Lock()
	k.owned[sessionID] = o
	k.mu.Unlock()
	go o.renew(loopCtx)
	k.log.Info("session owned", "session_id", sessionID, "epoch", l.Epoch, "recovered", len(rec))
	return o, rec, nil
}

// Lease is the lease as last acquired or renewed.
func (o *Ownership) Lease() store.Lease {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lease
}

// LostC is closed once this node must stop serving the session: another
// node took the lease, or renewals failed until it expired.
func (o *Ownership) LostC() <-chan struct{} { return o.lost }

// Lost reports whether LostC is closed.
func (o *Ownership) Lost() bool {
	select {
	case <-o.lost:
		return true
	default:
		return false
	}
}

// Valid reports whether, by this node's clock, no other node can have
// taken the lease yet: it is not known lost, and it was acquired or last
// renewed less than the TTL ago (minus a tenth of it, for the time a
// request takes between this check and its decision), measured from
// before the call that set it.
func (o *Ownership) Valid() bool {
	if o.Lost() {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return time.Now().Before(o.validUntil.Add(-o.k.cfg.TTL / 10))
}

// Confirm makes sure this node still holds the lease before it serves a
// request from its memory of the session. While Valid it returns at
// once. Past that (the process was paused, its renewals were late) it
// renews the lease now, within ctx and half the TTL: a refusal, or no
// answer in time, marks the ownership lost and returns ErrLeaseLost,
// since another node may then be serving the session.
func (o *Ownership) Confirm(ctx context.Context) error {
	if o.Valid() {
		return nil
	}
	sid := o.Lease().SessionID
	if o.Lost() {
		return fmt.Errorf("cluster: session %q: %w", sid, store.ErrLeaseLost)
	}
	ttl := o.k.cfg.TTL
	ctx, cancel := context.WithTimeout(ctx, ttl/2)
	defer cancel()
	start := time.Now()
	l, err := o.k.cfg.Store.RenewLease(ctx, o.Lease(), ttl)
	if err != nil {
		o.markLost("not confirmed past its local validity")
		if errors.Is(err, store.ErrLeaseLost) {
			o.k.obs.LeaseRenewal("lost")
			return err
		}
		o.k.obs.LeaseRenewal("failed")
		return fmt.Errorf("cluster: session %q: confirm the lease: %w: %w", sid, store.ErrLeaseLost, err)
	}
	o.k.obs.LeaseRenewal("ok")
	o.extend(l, start)
	return nil
}

// extend records a renewal that started at start, unless a later one
// already extended the lease further.
func (o *Ownership) extend(l store.Lease, start time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if until := start.Add(o.k.cfg.TTL); until.After(o.validUntil) {
		o.lease, o.validUntil = l, until
	}
}

// Commit commits msgs under the lease (store.Leaser.CommitLeased). A
// refusal for a lost lease also marks the ownership lost.
func (o *Ownership) Commit(ctx context.Context, msgs []synccore.Message) error {
	err := o.k.cfg.Store.CommitLeased(ctx, o.Lease(), msgs)
	if errors.Is(err, store.ErrLeaseLost) {
		o.markLost("commit refused")
	}
	return err
}

// Release stops renewing and gives the lease up, so another node may take
// the session at once.
func (o *Ownership) Release(ctx context.Context) error {
	o.stopRenewing()
	o.markLost("released")
	return o.k.cfg.Store.ReleaseLease(ctx, o.Lease())
}

// stopRenewing ends the renewal loop and waits for it; the lease is then
// only good until it expires.
func (o *Ownership) stopRenewing() {
	o.stop()
	<-o.done
	l := o.Lease()
	o.k.mu.Lock()
	if o.k.owned[l.SessionID] == o {
		delete(o.k.owned, l.SessionID)
	}
	o.k.mu.Unlock()
}

func (o *Ownership) markLost(why string) {
	o.once.Do(func() {
		close(o.lost)
		l := o.Lease()
		o.k.log.Info("session no longer owned", "session_id", l.SessionID, "epoch", l.Epoch, "why", why)
	})
}

// renew renews the lease every TTL/3. A refusal (another node took it) is
// a loss at once; renewals failing otherwise (the database unreachable)
// are a loss once the lease may have expired, since another node may then
// take it.
func (o *Ownership) renew(ctx context.Context) {
	defer close(o.done)
	ttl := o.k.cfg.TTL
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.lost:
			return
		case <-tick.C:
		}
		// Taken before the call: the database's new expiry is its now() +
		// ttl, which is no earlier than this, so no other node can take
		// the lease before it, whatever the clocks say.
		start := time.Now()
		l, err := o.k.cfg.Store.RenewLease(ctx, o.Lease(), ttl)
		switch {
		case err == nil:
			o.k.obs.LeaseRenewal("ok")
			o.extend(l, start)
		case errors.Is(err, store.ErrLeaseLost):
			o.k.obs.LeaseRenewal("lost")
			o.markLost("taken by another node")
			return
		case ctx.Err() != nil:
			return
		default:
			o.k.obs.LeaseRenewal("failed")
			o.k.log.Warn("lease renewal failed", "session_id", o.Lease().SessionID, "err", err)
			o.mu.Lock()
			expired := time.Now().After(o.validUntil)
			o.mu.Unlock()
			if expired {
				o.markLost("renewals failed until the lease may have expired")
				return
			}
		}
	}
}

// Forget stops serving a session (one leaving this node's memory): its
// ownership leaves the keeper at once, so a later Own takes the lease
// afresh at a new epoch, and the lease is released in the background (a
// release of a lease re-taken meanwhile is a no-op: it names the old
// epoch).
func (k *Keeper) Forget(sessionID string) {
	k.mu.Lock()
	o := k.owned[sessionID]
	delete(k.owned, sessionID)
	k.mu.Unlock()
	if o == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), k.cfg.TTL)
		defer cancel()
		if err := o.Release(ctx); err != nil {
			k.log.Warn("release lease", "session_id", sessionID, "err", err)
		}
	}()
}

// Close stops renewing every lease and releases them (a graceful stop:
// other nodes take the sessions at once rather than after the TTL).
func (k *Keeper) Close(ctx context.Context) error {
	k.mu.Lock()
	owned := make([]*Ownership, 0, len(k.owned))
	for _, o := range k.owned {
		owned = append(owned, o)
	}
	k.mu.Unlock()
	var errs []error
	for _, o := range owned {
		errs = append(errs, o.Release(ctx))
	}
	return errors.Join(errs...)
}
