package sqlite

import (
	"context"
	"time"

	"github.com/agentsync/agentsync/server/store"
)

// AcquireLease takes a session's lease for node (store.Leaser). One process
// owns a SQLite file, so its clock is the store's clock.
func (s *Store) AcquireLease(ctx context.Context, sessionID, node string, ttl time.Duration) (store.Lease, error) {
	var l store.Lease
	err := s.write(ctx, func(c *conn) error {
		now := nowMillis()
		st, err := c.query(`SELECT lease_node, lease_epoch, lease_expires FROM sessions WHERE session_id = ? AND deleted = 0`, sessionID)
		if err != nil {
			return err
		}
		found := st.Step()
		holder, epoch, expires := st.ColumnText(0), st.ColumnInt64(1), st.ColumnInt64(2)
		if err := done(st); err != nil {
			return err
		}
		switch {
		case !found:
			return store.ErrNoSession(sessionID)
		case expires > now && holder != node:
			return store.LeaseHeldError(sessionID, holder, time.UnixMilli(expires))
		}
		l = store.Lease{SessionID: sessionID, Node: node, Epoch: epoch + 1, Expires: time.UnixMilli(now + ttl.Milliseconds())}
		return c.exec(`UPDATE sessions SET lease_node = ?, lease_epoch = ?, lease_expires = ? WHERE session_id = ?`,
			node, l.Epoch, l.Expires.UnixMilli(), sessionID)
	})
	return l, err
}

// RenewLease extends l if it is still the session's lease (store.Leaser).
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	err := s.write(ctx, func(c *conn) error {
		sess, err := lookupSession(c, l.SessionID)
		if err != nil {
			return err
		}
		if err := sess.checkFence(l.SessionID, &l); err != nil {
			return err
		}
		l.Expires = time.UnixMilli(nowMillis() + ttl.Milliseconds())
		return c.exec(`UPDATE sessions SET lease_expires = ? WHERE sid = ?`, l.Expires.UnixMilli(), sess.sid)
	})
	return l, err
}

// ReleaseLease gives l up at once (store.Leaser).
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	return s.write(ctx, func(c *conn) error {
		return c.exec(`UPDATE sessions SET lease_node = '', lease_expires = 0 WHERE session_id = ? AND lease_epoch = ? AND lease_node = ?`,
			l.SessionID, l.Epoch, l.Node)
	})
}
