package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Orphaned lists the sessions whose lease expired with a message left
// streaming (store.Leaser), by the database's clock.
func (s *Store) Orphaned(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT s.session_id FROM sessions AS s
			WHERE NOT s.deleted AND s.lease_epoch > 0 AND s.lease_expires <= now()
				AND EXISTS (SELECT 1 FROM messages AS m WHERE m.sid = s.sid AND m.state = 'streaming')
			ORDER BY s.lease_expires LIMIT $1`, limit)
		if err != nil {
			return err
		}
		var id string
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			out = append(out, id)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: list orphaned sessions: %w", err)
	}
	return out, nil
}
