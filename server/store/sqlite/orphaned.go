package sqlite

import (
	"context"
	"fmt"
)

// Orphaned lists the sessions whose lease expired with a message left
// streaming (store.Leaser).
func (s *Store) Orphaned(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT s.session_id FROM sessions AS s
			WHERE s.deleted = 0 AND s.lease_epoch > 0 AND s.lease_expires <= ?
				AND EXISTS (SELECT 1 FROM messages AS m WHERE m.sid = s.sid AND m.state = 'streaming')
			ORDER BY s.lease_expires LIMIT ?`, nowMillis(), limit)
		if err != nil {
			return err
		}
		for st.Step() {
			out = append(out, st.ColumnText(0))
		}
		return done(st)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list orphaned sessions: %w", err)
	}
	return out, nil
}
