package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

// sessionColumns are read from sessions AS s with its parent p and root r
// (sessionFrom).
const sessionColumns = `s.session_id, s.model, s.approval_mode, s.created_at, s.updated_at, s.head_sequence, s.title, s.owner,
	COALESCE(p.session_id, ''), s.fork_sequence, COALESCE(r.session_id, s.session_id)`

const sessionFrom = ` FROM sessions AS s LEFT JOIN sessions AS p ON p.sid = s.parent_sid AND s.parent_sid <> 0
	LEFT JOIN sessions AS r ON r.sid = s.root_sid `

func scanSession(row pgx.Row) (store.Session, error) {
	var s store.Session
	err := row.Scan(&s.SessionID, &s.Model, &s.ApprovalMode, &s.CreatedAt, &s.UpdatedAt, &s.HeadSequence, &s.Title, &s.Owner,
		&s.ParentSessionID, &s.ForkSequence, &s.RootSessionID)
	return s, err
}

// CreateSession inserts a new, empty session (store.Store).
func (s *Store) CreateSession(ctx context.Context, sess store.Session) error {
	if sess.SessionID == "" {
		return synccore.Errorf(synccore.CodeBadRequest, "session_id is empty")
	}
	if sess.CreatedAt == 0 {
		sess.CreatedAt = nowMillis()
	}
	if sess.UpdatedAt == 0 {
		sess.UpdatedAt = sess.CreatedAt
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (session_id, model, approval_mode, created_at, updated_at, title, owner)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (session_id) DO NOTHING`,
			sess.SessionID, sess.Model, sess.ApprovalMode, sess.CreatedAt, sess.UpdatedAt, sess.Title, sess.Owner)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return synccore.Errorf(synccore.CodeConflict, "session %q already exists", sess.SessionID)
		}
		return nil
	})
}

// Session returns one session (store.Store).
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	var out store.Session
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.session_id = $1 AND NOT s.deleted`, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNoSession(id)
		}
		return err
	})
	return out, err
}

// ListSessions returns sessions of every owner, most recently active first
// (store.Store).
func (s *Store) ListSessions(ctx context.Context, limit int) ([]store.Session, error) {
	return s.listSessions(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE NOT s.deleted
			ORDER BY s.updated_at DESC, s.sid DESC LIMIT $1`, limit)
}

// ListOwnedSessions is ListSessions restricted to one owner's sessions.
func (s *Store) ListOwnedSessions(ctx context.Context, owner string, limit int) ([]store.Session, error) {
	return s.listSessions(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.owner = $2 AND NOT s.deleted
			ORDER BY s.updated_at DESC, s.sid DESC LIMIT $1`, limit, owner)
}

// listSessions runs a session listing whose first parameter is the limit.
func (s *Store) listSessions(ctx context.Context, query string, limit int, args ...any) ([]store.Session, error) {
	out := []store.Session{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, append([]any{store.SessionLimit(limit)}, args...)...)
		if err != nil {
			return err
		}
		for rows.Next() {
			sess, err := scanSession(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, sess)
		}
		return rows.Err()
	})
	return out, err
}

// UpdateSession changes a session's model and approval mode (store.Store).
func (s *Store) UpdateSession(ctx context.Context, sess store.Session) error {
	if sess.UpdatedAt == 0 {
		sess.UpdatedAt = nowMillis()
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE sessions SET model = $1, approval_mode = $2, updated_at = $3 WHERE session_id = $4 AND NOT deleted`,
			sess.Model, sess.ApprovalMode, sess.UpdatedAt, sess.SessionID)
		if err == nil && tag.RowsAffected() == 0 {
			return store.ErrNoSession(sess.SessionID)
		}
		return err
	})
}

// RenameSession sets a session's title (store.Store).
func (s *Store) RenameSession(ctx context.Context, id, title string) (store.Session, error) {
	title, err := store.CleanTitle(title)
	if err != nil {
		return store.Session{}, err
	}
	var out store.Session
	err = s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE sessions SET title = $1 WHERE session_id = $2 AND NOT deleted`, title, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNoSession(id)
		}
		out, err = scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.session_id = $1`, id))
		return err
	})
	return out, err
}

// DeleteSession removes a session with all its messages, parts and
// summaries in one transaction (store.Store); a session forks still
// reference stays as a tombstone until its last fork goes.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		// Locked: a fork made at the same time waits, or is seen.
		row, err := scanSessionRow(tx.QueryRow(ctx, lockSessionSQL, id, "0"), id)
		if err != nil {
			return err
		}
		if err := deleteAccess(ctx, tx, id); err != nil {
			return err
		}
		for sid, parent := row.sid, row.parent; sid != 0; {
			var forked bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE parent_sid = $1)`, sid).Scan(&forked); err != nil {
				return err
			}
			if forked {
				_, err := tx.Exec(ctx, `UPDATE sessions SET deleted = true, lease_node = '', lease_expires = '-infinity' WHERE sid = $1`, sid)
				return err
			}
			for _, q := range []string{
				`DELETE FROM summaries WHERE sid = $1`,
				`DELETE FROM search_docs WHERE sid = $1`,
				`DELETE FROM parts WHERE sid = $1`,
				`DELETE FROM messages WHERE sid = $1`,
				`DELETE FROM sessions WHERE sid = $1`,
			} {
				if _, err := tx.Exec(ctx, q, sid); err != nil {
					return err
				}
			}
			// The parent goes too if it is a tombstone this was the last
			// fork of (its row locked: two forks deleted at once see each
			// other).
			sid = 0
			if parent != 0 {
				var grand int64
				err := tx.QueryRow(ctx, `SELECT parent_sid FROM sessions WHERE sid = $1 AND deleted FOR UPDATE`, parent).Scan(&grand)
				if err == nil {
					sid, parent = parent, grand
				} else if !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
		}
		return nil
	})
}

// sessionRow is what reads and commits need of a session.
type sessionRow struct {
	sid          int64
	head         int64 // sequence of the newest message (0: none)
	visibleCount int64
	leaseNode    string
	leaseEpoch   int64 // 0: never leased
	parent       int64 // the parent's sid (0: a root)
	fork         int64 // the sequence the session was forked before (0: a root)
	root         int64 // the conversation root's sid (0: the session itself)
	updatedAt    int64 // as locked
	moved        bool  // the commit being written moves updated_at at once (store.Moves)
}

// rootSID is the sid of the session's conversation root.
func (r sessionRow) rootSID() int64 {
	if r.root == 0 {
		return r.sid
	}
	return r.root
}

// lookupSession finds a session by its id in the caller's snapshot.
func lookupSession(ctx context.Context, tx pgx.Tx, id string) (sessionRow, error) {
	return scanSessionRow(tx.QueryRow(ctx, `SELECT `+sessionRowColumns+` FROM sessions WHERE session_id = $1 AND NOT deleted`, id), id)
}

// lockSession finds a session and locks its row until the transaction
// ends: the writers of one session take turns, on every node. It also
// declares the lease epoch the transaction writes at (fence's, or 0 for
// an unleased write), which the schema's triggers check against the
// session's, and checks it here first for a typed error.
const lockSessionSQL = `SELECT ` + sessionRowColumns + `
	FROM sessions, set_config('agentsync.lease_epoch', $2, true) WHERE session_id = $1 AND NOT deleted FOR UPDATE OF sessions`

func lockSession(ctx context.Context, tx pgx.Tx, id string, fence *store.Lease) (sessionRow, error) {
	epoch := int64(0)
	if fence != nil {
		epoch = fence.Epoch
	}
	row, err := scanSessionRow(tx.QueryRow(ctx, lockSessionSQL, id, strconv.FormatInt(epoch, 10)), id)
	if err != nil {
		return row, err
	}
	return row, store.CheckFence(id, fence, row.leaseNode, row.leaseEpoch)
}

// sessionRowColumns are the columns scanSessionRow reads, in its order.
const sessionRowColumns = `sid, head_sequence, visible_count, lease_node, lease_epoch, parent_sid, fork_sequence, root_sid, updated_at`

func scanSessionRow(row pgx.Row, id string) (sessionRow, error) {
	var r sessionRow
	err := row.Scan(&r.sid, &r.head, &r.visibleCount, &r.leaseNode, &r.leaseEpoch, &r.parent, &r.fork, &r.root, &r.updatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessionRow{}, store.ErrNoSession(id)
	}
	return r, err
}
