package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

const sessionColumns = `session_id, model, approval_mode, created_at, updated_at, head_sequence, title, owner`

func scanSession(row pgx.Row) (store.Session, error) {
	var s store.Session
	err := row.Scan(&s.SessionID, &s.Model, &s.ApprovalMode, &s.CreatedAt, &s.UpdatedAt, &s.HeadSequence, &s.Title, &s.Owner)
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
		out, err = scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE session_id = $1`, id))
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
	return s.listSessions(ctx, `SELECT `+sessionColumns+` FROM sessions
			ORDER BY updated_at DESC, sid DESC LIMIT $1`, limit)
}

// ListOwnedSessions is ListSessions restricted to one owner's sessions.
func (s *Store) ListOwnedSessions(ctx context.Context, owner string, limit int) ([]store.Session, error) {
	return s.listSessions(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE owner = $2
			ORDER BY updated_at DESC, sid DESC LIMIT $1`, limit, owner)
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
		tag, err := tx.Exec(ctx, `UPDATE sessions SET model = $1, approval_mode = $2, updated_at = $3 WHERE session_id = $4`,
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
		var err error
		out, err = scanSession(tx.QueryRow(ctx, `UPDATE sessions SET title = $1 WHERE session_id = $2 RETURNING `+sessionColumns, title, id))
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNoSession(id)
		}
		return err
	})
	return out, err
}

// DeleteSession removes a session with all its messages, parts and
// summaries in one transaction (store.Store).
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		row, err := lookupSession(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM summaries WHERE sid = $1`,
			`DELETE FROM parts WHERE sid = $1`,
			`DELETE FROM messages WHERE sid = $1`,
			`DELETE FROM sessions WHERE sid = $1`,
		} {
			if _, err := tx.Exec(ctx, q, row.sid); err != nil {
				return err
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
}

// lookupSession finds a session by its id in the caller's snapshot.
func lookupSession(ctx context.Context, tx pgx.Tx, id string) (sessionRow, error) {
	return scanSessionRow(tx.QueryRow(ctx, `SELECT sid, head_sequence, visible_count, lease_node, lease_epoch
		FROM sessions WHERE session_id = $1`, id), id)
}

// lockSession finds a session and locks its row until the transaction
// ends: the writers of one session take turns, on every node. It also
// declares the lease epoch the transaction writes at (fence's, or 0 for
// an unleased write), which the schema's triggers check against the
// session's, and checks it here first for a typed error.
const lockSessionSQL = `SELECT sid, head_sequence, visible_count, lease_node, lease_epoch
	FROM sessions, set_config('agentsync.lease_epoch', $2, true) WHERE session_id = $1 FOR UPDATE OF sessions`

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

func scanSessionRow(row pgx.Row, id string) (sessionRow, error) {
	var r sessionRow
	err := row.Scan(&r.sid, &r.head, &r.visibleCount, &r.leaseNode, &r.leaseEpoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessionRow{}, store.ErrNoSession(id)
	}
	return r, err
}
