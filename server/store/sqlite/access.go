package sqlite

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/ncruces/go-sqlite3"
)

const shareColumns = `share_id, session_id, token_hash, mode, include_forks, expires_at, created_at, created_by`

func scanShare(st *sqlite3.Stmt) store.Share {
	return store.Share{
		ShareID: st.ColumnText(0), SessionID: st.ColumnText(1), TokenHash: st.ColumnBlob(2, nil),
		Mode: st.ColumnText(3), IncludeForks: st.ColumnInt(4) != 0, ExpiresAt: st.ColumnInt64(5),
		CreatedAt: st.ColumnInt64(6), CreatedBy: st.ColumnText(7),
	}
}

// deleteAccess removes a session's shares and members (DeleteSession).
func deleteAccess(c *conn, id string) error {
	if err := c.exec(`DELETE FROM session_shares WHERE session_id = ?`, id); err != nil {
		return err
	}
	return c.exec(`DELETE FROM session_members WHERE session_id = ?`, id)
}

// exists reports whether query (one row or none) finds a row.
func exists(c *conn, query string, args ...any) (bool, error) {
	st, err := c.query(query, args...)
	if err != nil {
		return false, err
	}
	found := st.Step()
	return found, done(st)
}

// CreateShare stores a share link (store.Access).
func (s *Store) CreateShare(ctx context.Context, sh store.Share) error {
	if sh.ShareID == "" || len(sh.TokenHash) == 0 {
		return synccore.Errorf(synccore.CodeBadRequest, "share: empty share_id or token hash")
	}
	if sh.CreatedAt == 0 {
		sh.CreatedAt = nowMillis()
	}
	return s.write(ctx, func(c *conn) error {
		if _, err := lookupSession(c, sh.SessionID); err != nil {
			return err
		}
		taken, err := exists(c, `SELECT 1 FROM session_shares WHERE share_id = ? OR token_hash = ?`, sh.ShareID, sh.TokenHash)
		if err != nil {
			return err
		}
		if taken {
			return synccore.Errorf(synccore.CodeConflict, "share %q already exists", sh.ShareID)
		}
		return c.exec(`INSERT INTO session_shares (`+shareColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			sh.ShareID, sh.SessionID, sh.TokenHash, sh.Mode, sh.IncludeForks, sh.ExpiresAt, sh.CreatedAt, sh.CreatedBy)
	})
}

// ShareByToken finds a share by its token's hash (store.Access).
func (s *Store) ShareByToken(ctx context.Context, tokenHash []byte) (store.Share, error) {
	var out store.Share
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT `+shareColumns+` FROM session_shares AS h WHERE token_hash = ?
			AND EXISTS (SELECT 1 FROM sessions WHERE session_id = h.session_id AND deleted = 0)`, tokenHash)
		if err != nil {
			return err
		}
		found := st.Step()
		if found {
			out = scanShare(st)
		}
		if err := done(st); err != nil {
			return err
		}
		if !found {
			return synccore.Errorf(synccore.CodeNotFound, "share not found")
		}
		return nil
	})
	return out, err
}

// ListShares returns a session's shares, oldest first (store.Access).
func (s *Store) ListShares(ctx context.Context, sessionID string) ([]store.Share, error) {
	out := []store.Share{}
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT `+shareColumns+` FROM session_shares WHERE session_id = ? ORDER BY created_at, share_id`, sessionID)
		if err != nil {
			return err
		}
		for st.Step() {
			out = append(out, scanShare(st))
		}
		return done(st)
	})
	return out, err
}

// DeleteShare revokes a share (store.Access).
func (s *Store) DeleteShare(ctx context.Context, sessionID, shareID string) error {
	return s.write(ctx, func(c *conn) error {
		if err := c.exec(`DELETE FROM session_shares WHERE session_id = ? AND share_id = ?`, sessionID, shareID); err != nil {
			return err
		}
		if c.db.Changes() == 0 {
			return synccore.Errorf(synccore.CodeNotFound, "share %q not found", shareID)
		}
		return nil
	})
}

// PutMember adds a member or changes its role (store.Access).
func (s *Store) PutMember(ctx context.Context, m store.Member) error {
	if m.CreatedAt == 0 {
		m.CreatedAt = nowMillis()
	}
	return s.write(ctx, func(c *conn) error {
		if _, err := lookupSession(c, m.SessionID); err != nil {
			return err
		}
		return c.exec(`INSERT INTO session_members (session_id, principal, role, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (session_id, principal) DO UPDATE SET role = excluded.role`, m.SessionID, m.Principal, m.Role, m.CreatedAt)
	})
}

// Member returns one member (store.Access).
func (s *Store) Member(ctx context.Context, sessionID, principal string) (store.Member, error) {
	var out store.Member
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT role, created_at FROM session_members WHERE session_id = ? AND principal = ?`, sessionID, principal)
		if err != nil {
			return err
		}
		found := st.Step()
		if found {
			out = store.Member{SessionID: sessionID, Principal: principal, Role: st.ColumnText(0), CreatedAt: st.ColumnInt64(1)}
		}
		if err := done(st); err != nil {
			return err
		}
		if !found {
			return synccore.Errorf(synccore.CodeNotFound, "member %q not found", principal)
		}
		return nil
	})
	return out, err
}

// ListMembers returns a session's members, oldest first (store.Access).
func (s *Store) ListMembers(ctx context.Context, sessionID string) ([]store.Member, error) {
	out := []store.Member{}
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT principal, role, created_at FROM session_members WHERE session_id = ? ORDER BY created_at, principal`, sessionID)
		if err != nil {
			return err
		}
		for st.Step() {
			out = append(out, store.Member{SessionID: sessionID, Principal: st.ColumnText(0), Role: st.ColumnText(1), CreatedAt: st.ColumnInt64(2)})
		}
		return done(st)
	})
	return out, err
}

// DeleteMember removes a member (store.Access).
func (s *Store) DeleteMember(ctx context.Context, sessionID, principal string) error {
	return s.write(ctx, func(c *conn) error {
		if err := c.exec(`DELETE FROM session_members WHERE session_id = ? AND principal = ?`, sessionID, principal); err != nil {
			return err
		}
		if c.db.Changes() == 0 {
			return synccore.Errorf(synccore.CodeNotFound, "member %q not found", principal)
		}
		return nil
	})
}
