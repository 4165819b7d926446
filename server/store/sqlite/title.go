package sqlite

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
)

// RenameSession sets a session's title: whitespace is trimmed, an empty or
// longer title than MaxTitleRunes is CodeBadRequest. It is not activity:
// updated_at (the sidebar's order) does not move. CodeNotFound if the
// session does not exist.
func (s *Store) RenameSession(ctx context.Context, id, title string) (store.Session, error) {
	title, err := store.CleanTitle(title)
	if err != nil {
		return store.Session{}, err
	}
	err = s.write(ctx, func(c *conn) error {
		if err := c.exec(`UPDATE sessions SET title = ? WHERE session_id = ?`, title, id); err != nil {
			return err
		}
		if c.db.Changes() == 0 {
			return store.ErrNoSession(id)
		}
		return nil
	})
	if err != nil {
		return store.Session{}, err
	}
	return s.Session(ctx, id)
}

// DeleteSession removes a session with all its messages, parts and
// summaries in one transaction. CodeNotFound if it does not exist.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.write(ctx, func(c *conn) error {
		row, err := lookupSession(c, id)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM summaries WHERE sid = ?`,
			`DELETE FROM parts WHERE sid = ?`,
			`DELETE FROM messages WHERE sid = ?`,
			`DELETE FROM sessions WHERE sid = ?`,
		} {
			if err := c.exec(q, row.sid); err != nil {
				return err
			}
		}
		return nil
	})
}
