package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/jackc/pgx/v5"
)

// AcquireLease takes a session's lease for node (store.Leaser): one
// conditional UPDATE, so two nodes racing for it cannot both win, with
// expiry judged by the database's clock.
func (s *Store) AcquireLease(ctx context.Context, sessionID, node string, ttl time.Duration) (store.Lease, error) {
	l := store.Lease{SessionID: sessionID, Node: node}
	err := s.write(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE sessions SET lease_node = $2, lease_epoch = lease_epoch + 1,
				lease_expires = now() + $3 * interval '1 microsecond'
			WHERE session_id = $1 AND NOT deleted AND (lease_expires <= now() OR lease_node = $2)
			RETURNING lease_epoch, lease_expires`, sessionID, node, ttl.Microseconds()).Scan(&l.Epoch, &l.Expires)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var holder string
		var expires time.Time
		err = tx.QueryRow(ctx, `SELECT lease_node, lease_expires FROM sessions WHERE session_id = $1 AND NOT deleted`, sessionID).Scan(&holder, &expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNoSession(sessionID)
		}
		if err != nil {
			return err
		}
		return store.LeaseHeldError(sessionID, holder, expires)
	})
	return l, err
}

// RenewLease extends l if it is still the session's lease (store.Leaser).
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	err := s.write(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE sessions SET lease_expires = now() + $4 * interval '1 microsecond'
			WHERE session_id = $1 AND lease_epoch = $2 AND lease_node = $3 RETURNING lease_expires`,
			l.SessionID, l.Epoch, l.Node, ttl.Microseconds()).Scan(&l.Expires)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		row, err := lookupSession(ctx, tx, l.SessionID)
		if err != nil {
			return err
		}
		return store.LeaseLostError(l, row.leaseEpoch)
	})
	return l, err
}

// ReleaseLease gives l up at once (store.Leaser).
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE sessions SET lease_node = '', lease_expires = '-infinity'
			WHERE session_id = $1 AND lease_epoch = $2 AND lease_node = $3`, l.SessionID, l.Epoch, l.Node)
		return err
	})
}
