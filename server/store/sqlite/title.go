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
		if err := c.exec(`UPDATE sessions SET title = ? WHERE session_id = ? AND deleted = 0`, title, id); err != nil {
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
// summaries in one transaction. A session that forks still reference
// stays as a tombstone (store.Store): gone for every call, its rows kept
// for their paths; deleting the last fork of a tombstone removes it too,
// up the tree. CodeNotFound if it does not exist.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.write(ctx, func(c *conn) error {
		row, err := lookupSession(c, id)
		if err != nil {
			return err
		}
		if err := deleteAccess(c, id); err != nil {
			return err
		}
		for sid, parent := row.sid, row.parent; sid != 0; {
			st, err := c.query(`SELECT EXISTS (SELECT 1 FROM sessions WHERE parent_sid = ?)`, sid)
			if err != nil {
				return err
			}
			st.Step()
			forked := st.ColumnInt(0) != 0
			if err := done(st); err != nil {
				return err
			}
			if forked {
				return c.exec(`UPDATE sessions SET deleted = 1, lease_node = '', lease_expires = 0 WHERE sid = ?`, sid)
			}
			for _, q := range []string{
				`DELETE FROM summaries WHERE sid = ?`,
				`DELETE FROM search_docs WHERE sid = ?`,
				`DELETE FROM parts WHERE sid = ?`,
				`DELETE FROM messages WHERE sid = ?`,
				`DELETE FROM sessions WHERE sid = ?`,
			} {
				if err := c.exec(q, sid); err != nil {
					return err
				}
			}
			c.chains.forget(sid)
			// The parent goes too if it is a tombstone this was the last
			// fork of.
			sid = 0
			if parent != 0 {
				st, err := c.query(`SELECT parent_sid FROM sessions WHERE sid = ? AND deleted = 1`, parent)
				if err != nil {
					return err
				}
				if st.Step() {
					sid, parent = parent, st.ColumnInt64(0)
				}
				if err := done(st); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
