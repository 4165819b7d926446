package postgres

import (
	"context"
	"errors"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

const shareColumns = `share_id, session_id, token_hash, mode, include_forks, expires_at, created_at, created_by`

func scanShare(row pgx.Row) (store.Share, error) {
	var sh store.Share
	err := row.Scan(&sh.ShareID, &sh.SessionID, &sh.TokenHash, &sh.Mode, &sh.IncludeForks, &sh.ExpiresAt, &sh.CreatedAt, &sh.CreatedBy)
	return sh, err
}

// deleteAccess removes a session's shares and members (DeleteSession).
func deleteAccess(ctx context.Context, tx pgx.Tx, id string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM session_shares WHERE session_id = $1`, id); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM session_members WHERE session_id = $1`, id)
	return err
}

// lockLive holds a live session's row against a delete until the
// transaction ends; CodeNotFound for an unknown or deleted one.
func lockLive(ctx context.Context, tx pgx.Tx, id string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM sessions WHERE session_id = $1 AND NOT deleted FOR SHARE`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNoSession(id)
	}
	return err
}

// CreateShare stores a share link (store.Access).
func (s *Store) CreateShare(ctx context.Context, sh store.Share) error {
	if sh.ShareID == "" || len(sh.TokenHash) == 0 {
		return synccore.Errorf(synccore.CodeBadRequest, "share: empty share_id or token hash")
	}
	if sh.CreatedAt == 0 {
		sh.CreatedAt = nowMillis()
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := lockLive(ctx, tx, sh.SessionID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO session_shares (`+shareColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			sh.ShareID, sh.SessionID, sh.TokenHash, sh.Mode, sh.IncludeForks, sh.ExpiresAt, sh.CreatedAt, sh.CreatedBy)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return synccore.Errorf(synccore.CodeConflict, "share %q already exists", sh.ShareID)
		}
		return nil
	})
}

// ShareByToken finds a share by its token's hash (store.Access).
func (s *Store) ShareByToken(ctx context.Context, tokenHash []byte) (store.Share, error) {
	var out store.Share
	err := s.read(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = scanShare(tx.QueryRow(ctx, `SELECT `+shareColumns+` FROM session_shares AS h WHERE token_hash = $1
			AND EXISTS (SELECT 1 FROM sessions WHERE session_id = h.session_id AND NOT deleted)`, tokenHash))
		if errors.Is(err, pgx.ErrNoRows) {
			return synccore.Errorf(synccore.CodeNotFound, "share not found")
		}
		return err
	})
	return out, err
}

// ListShares returns a session's shares, oldest first (store.Access).
func (s *Store) ListShares(ctx context.Context, sessionID string) ([]store.Share, error) {
	out := []store.Share{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+shareColumns+` FROM session_shares WHERE session_id = $1 ORDER BY created_at, share_id`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			sh, err := scanShare(rows)
			if err != nil {
				return err
			}
			out = append(out, sh)
		}
		return rows.Err()
	})
	return out, err
}

// DeleteShare revokes a share (store.Access).
func (s *Store) DeleteShare(ctx context.Context, sessionID, shareID string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM session_shares WHERE session_id = $1 AND share_id = $2`, sessionID, shareID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
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
	return s.write(ctx, func(tx pgx.Tx) error {
		if err := lockLive(ctx, tx, m.SessionID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO session_members (session_id, principal, role, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (session_id, principal) DO UPDATE SET role = excluded.role`, m.SessionID, m.Principal, m.Role, m.CreatedAt)
		return err
	})
}

// Member returns one member (store.Access).
func (s *Store) Member(ctx context.Context, sessionID, principal string) (store.Member, error) {
	out := store.Member{SessionID: sessionID, Principal: principal}
	err := s.read(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT role, created_at FROM session_members WHERE session_id = $1 AND principal = $2`,
			sessionID, principal).Scan(&out.Role, &out.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return synccore.Errorf(synccore.CodeNotFound, "member %q not found", principal)
		}
		return err
	})
	if err != nil {
		return store.Member{}, err
	}
	return out, nil
}

// ListMembers returns a session's members, oldest first (store.Access).
func (s *Store) ListMembers(ctx context.Context, sessionID string) ([]store.Member, error) {
	out := []store.Member{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT principal, role, created_at FROM session_members WHERE session_id = $1 ORDER BY created_at, principal`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			m := store.Member{SessionID: sessionID}
			if err := rows.Scan(&m.Principal, &m.Role, &m.CreatedAt); err != nil {
				return err
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	return out, err
}

// DeleteMember removes a member (store.Access).
func (s *Store) DeleteMember(ctx context.Context, sessionID, principal string) error {
	return s.write(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM session_members WHERE session_id = $1 AND principal = $2`, sessionID, principal)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return synccore.Errorf(synccore.CodeNotFound, "member %q not found", principal)
		}
		return nil
	})
}
