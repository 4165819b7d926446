package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// Leases decide which node runs a session's turn loop when several server
// nodes share one database. A node acquires a session's lease for a TTL
// and renews it while it serves the session; every acquisition bumps the
// session's epoch, and a commit under a lease (CommitLeased) is refused in
// its own transaction unless the lease's epoch is still the session's. So
// a node that stalled past its TTL, lost its lease to another node and woke
// up cannot write: it is fenced off, whatever it believes.
//
// Once a session has been leased (epoch > 0), only CommitLeased and
// RecoverLeased write its messages: a plain Commit is refused too.
type Leaser interface {
	// AcquireLease takes the lease of a session for node, for ttl, if no
	// other node holds an unexpired one (ErrLeaseHeld otherwise), and bumps
	// the epoch. Expiry is judged by the store's clock (the database's),
	// never the node's.
	AcquireLease(ctx context.Context, sessionID, node string, ttl time.Duration) (Lease, error)
	// RenewLease extends l by ttl from now if l is still the session's
	// lease (same epoch); ErrLeaseLost otherwise.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// ReleaseLease gives l up at once so another node may acquire it
	// without waiting for its expiry; l then neither renews nor commits. A
	// lease already lost is no error.
	ReleaseLease(ctx context.Context, l Lease) error
	// CommitLeased is Commit fenced by l: refused with ErrLeaseLost, in
	// the same transaction, when l's epoch is no longer the session's.
	CommitLeased(ctx context.Context, l Lease, msgs []synccore.Message) error
	// RecoverLeased closes the session's messages left streaming (as
	// RecoverStreaming does), fenced by l: what a node runs after it took
	// the lease of a session whose owner died.
	RecoverLeased(ctx context.Context, l Lease, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error)
	// Orphaned lists (at most limit of) the sessions whose lease has
	// expired, by the store's clock, with a message left streaming: a
	// dead or stalled owner's, which no node serves. Live nodes take them
	// over (and so close those messages) without waiting for a request.
	Orphaned(ctx context.Context, limit int) ([]string, error)
}

// Lease is a node's hold on one session.
type Lease struct {
	SessionID string
	Node      string
	Epoch     int64     // the session's epoch this lease was acquired at
	Expires   time.Time // by the store's clock
}

var (
	// ErrLeaseHeld: another node holds an unexpired lease of the session.
	ErrLeaseHeld = errors.New("store: lease held by another node")
	// ErrLeaseLost: the lease was taken by another acquisition (fenced).
	ErrLeaseLost = errors.New("store: lease lost")
)

// LeaseHeld is ErrLeaseHeld with the holder: errors.Is(err, ErrLeaseHeld)
// and errors.As(err, **synccore.Error) (CodeConflict) both hold, and the
// session engine reads Node to route the request to the holder.
type LeaseHeld struct {
	SessionID string
	Node      string    // the node holding the lease
	Expires   time.Time // when it lapses unless renewed, by the store's clock
	typed     *synccore.Error
}

// LeaseHeldError is ErrLeaseHeld with the holder, typed CodeConflict.
func LeaseHeldError(sessionID, holder string, expires time.Time) error {
	return &LeaseHeld{SessionID: sessionID, Node: holder, Expires: expires, typed: synccore.Errorf(synccore.CodeConflict,
		"session %q is leased to node %q until %s", sessionID, holder, expires.UTC().Format(time.RFC3339Nano))}
}

func (e *LeaseHeld) Error() string        { return ErrLeaseHeld.Error() + ": " + e.typed.Error() }
func (e *LeaseHeld) Is(target error) bool { return target == ErrLeaseHeld }
func (e *LeaseHeld) Unwrap() error        { return e.typed }

// LeaseLostError is ErrLeaseLost for l, typed CodeConflict.
func LeaseLostError(l Lease, epoch int64) error {
	return fmt.Errorf("%w: %w", ErrLeaseLost, synccore.Errorf(synccore.CodeConflict,
		"node %q's lease of session %q at epoch %d is stale (the session is at epoch %d)", l.Node, l.SessionID, l.Epoch, epoch))
}

// UnleasedCommitError refuses a plain Commit to a leased session.
func UnleasedCommitError(sessionID string, epoch int64) error {
	return fmt.Errorf("%w: %w", ErrLeaseLost, synccore.Errorf(synccore.CodeConflict,
		"session %q is leased (epoch %d): commit under its lease", sessionID, epoch))
}

// CheckFence refuses a write to a session at lease (holder, epoch) unless
// fence is that lease; a nil fence is an unleased write, allowed only to a
// session never leased (epoch 0). Stores call it in the write's
// transaction, after locking the session.
func CheckFence(sessionID string, fence *Lease, holder string, epoch int64) error {
	switch {
	case fence == nil && epoch != 0:
		return UnleasedCommitError(sessionID, epoch)
	case fence != nil && (fence.Epoch != epoch || fence.Node != holder):
		return LeaseLostError(*fence, epoch)
	}
	return nil
}
