package sqlite

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/ncruces/go-sqlite3"
)

// sessionColumns are read from sessions AS s with its parent p and root r
// (sessionFrom).
const sessionColumns = `s.session_id, s.model, s.approval_mode, s.created_at, s.updated_at, s.head_sequence, s.title, s.owner,
	COALESCE(p.session_id, ''), s.fork_sequence, COALESCE(r.session_id, s.session_id)`

const sessionFrom = ` FROM sessions AS s LEFT JOIN sessions AS p ON p.sid = s.parent_sid AND s.parent_sid <> 0
	LEFT JOIN sessions AS r ON r.sid = s.root_sid `

func scanSession(st *sqlite3.Stmt) store.Session {
	return store.Session{
		SessionID:    st.ColumnText(0),
		Model:        st.ColumnText(1),
		ApprovalMode: st.ColumnText(2),
		CreatedAt:    st.ColumnInt64(3),
		UpdatedAt:    st.ColumnInt64(4),
		HeadSequence: st.ColumnInt64(5),
		Title:        st.ColumnText(6),
		Owner:        st.ColumnText(7),

		ParentSessionID: st.ColumnText(8),
		ForkSequence:    st.ColumnInt64(9),
		RootSessionID:   st.ColumnText(10),
	}
}

// CreateSession inserts a new, empty session. A zero CreatedAt becomes now
// and a zero UpdatedAt becomes CreatedAt; HeadSequence is ignored (a new
// session has no messages). An id already in use is CodeConflict.
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
	return s.write(ctx, func(c *conn) error {
		if err := checkFreeID(c, sess.SessionID); err != nil {
			return err
		}
		return c.exec(`INSERT INTO sessions (session_id, model, approval_mode, created_at, updated_at, title, owner)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			sess.SessionID, sess.Model, sess.ApprovalMode, sess.CreatedAt, sess.UpdatedAt, sess.Title, sess.Owner)
	})
}

// Session returns one session; CodeNotFound if it does not exist.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	var out store.Session
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT `+sessionColumns+sessionFrom+`WHERE s.session_id = ? AND s.deleted = 0`, id)
		if err != nil {
			return err
		}
		found := st.Step()
		if found {
			out = scanSession(st)
		}
		if err := done(st); err != nil {
			return err
		}
		if !found {
			return store.ErrNoSession(id)
		}
		return nil
	})
	return out, err
}

// ListSessions returns up to limit sessions of every owner, most recently
// active first (by updated_at: every commit and setting change moves a
// session up; ties by insertion order, newest first). limit <= 0 means 100;
// it is capped at 1000.
func (s *Store) ListSessions(ctx context.Context, limit int) ([]store.Session, error) {
	return s.listSessions(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.deleted = 0
			ORDER BY s.updated_at DESC, s.sid DESC LIMIT ?`, limit)
}

// ListOwnedSessions is ListSessions restricted to one owner's sessions.
func (s *Store) ListOwnedSessions(ctx context.Context, owner string, limit int) ([]store.Session, error) {
	return s.listSessions(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.owner = ? AND s.deleted = 0
			ORDER BY s.updated_at DESC, s.sid DESC LIMIT ?`, limit, owner)
}

// listSessions runs a session listing whose last parameter is the limit.
func (s *Store) listSessions(ctx context.Context, query string, limit int, args ...any) ([]store.Session, error) {
	limit = store.SessionLimit(limit)
	out := []store.Session{}
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(query, append(args, limit)...)
		if err != nil {
			return err
		}
		for st.Step() {
			out = append(out, scanSession(st))
		}
		return done(st)
	})
	return out, err
}

// UpdateSession changes a session's model and approval mode (the other
// fields are the store's) and sets updated_at to sess.UpdatedAt, or now when
// that is zero. CodeNotFound if the session does not exist.
func (s *Store) UpdateSession(ctx context.Context, sess store.Session) error {
	if sess.UpdatedAt == 0 {
		sess.UpdatedAt = nowMillis()
	}
	return s.write(ctx, func(c *conn) error {
		if err := c.exec(`UPDATE sessions SET model = ?, approval_mode = ?, updated_at = ? WHERE session_id = ? AND deleted = 0`,
			sess.Model, sess.ApprovalMode, sess.UpdatedAt, sess.SessionID); err != nil {
			return err
		}
		if c.db.Changes() == 0 {
			return store.ErrNoSession(sess.SessionID)
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
	updatedAt    int64 // as read
	moved        bool  // the commit being written moves updated_at at once (store.Moves)
}

// checkFence refuses a write to the session unless fence is its current
// lease (store.CheckFence).
func (r sessionRow) checkFence(sessionID string, fence *store.Lease) error {
	return store.CheckFence(sessionID, fence, r.leaseNode, r.leaseEpoch)
}

// rootSID is the sid of the session's conversation root.
func (r sessionRow) rootSID() int64 {
	if r.root == 0 {
		return r.sid
	}
	return r.root
}

// lookupSession finds a session by its id; CodeNotFound if absent.
func lookupSession(c *conn, id string) (sessionRow, error) {
	st, err := c.query(`SELECT sid, head_sequence, visible_count, lease_node, lease_epoch, parent_sid, fork_sequence, root_sid, updated_at
		FROM sessions WHERE session_id = ? AND deleted = 0`, id)
	if err != nil {
		return sessionRow{}, err
	}
	var row sessionRow
	found := st.Step()
	if found {
		row = sessionRow{sid: st.ColumnInt64(0), head: st.ColumnInt64(1), visibleCount: st.ColumnInt64(2),
			leaseNode: st.ColumnText(3), leaseEpoch: st.ColumnInt64(4),
			parent: st.ColumnInt64(5), fork: st.ColumnInt64(6), root: st.ColumnInt64(7), updatedAt: st.ColumnInt64(8)}
	}
	if err := done(st); err != nil {
		return sessionRow{}, err
	}
	if !found {
		return sessionRow{}, store.ErrNoSession(id)
	}
	return row, nil
}

// checkFreeID refuses an id in use, by a live session or a tombstone
// (a deleted session its forks still read).
func checkFreeID(c *conn, id string) error {
	st, err := c.query(`SELECT 1 FROM sessions WHERE session_id = ?`, id)
	if err != nil {
		return err
	}
	taken := st.Step()
	if err := done(st); err != nil {
		return err
	}
	if taken {
		return synccore.Errorf(synccore.CodeConflict, "session %q already exists", id)
	}
	return nil
}
