package postgres

import (
	"context"
	"errors"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

// path returns a session's row and the segments of its path, newest
// first: one round trip (a recursive walk up the forks), whatever the
// prefix's length.
func path(ctx context.Context, tx pgx.Tx, sessionID string, lock bool) (sessionRow, []store.Segment, error) {
	var sess sessionRow
	var err error
	if lock {
		// The parent of a fork being made: a delete of it waits, or is
		// seen (its row is gone).
		sess, err = scanSessionRow(tx.QueryRow(ctx, `SELECT `+sessionRowColumns+` FROM sessions WHERE session_id = $1 AND NOT deleted FOR SHARE`, sessionID), sessionID)
	} else {
		sess, err = lookupSession(ctx, tx, sessionID)
	}
	if err != nil {
		return sessionRow{}, nil, err
	}
	chain := []store.Link{{SID: sess.sid, Fork: sess.fork}}
	if sess.parent != 0 {
		rows, err := tx.Query(ctx, `WITH RECURSIVE up(sid, parent_sid, fork_sequence, depth) AS (
				SELECT sid, parent_sid, fork_sequence, 1 FROM sessions WHERE sid = $1
				UNION ALL
				SELECT s.sid, s.parent_sid, s.fork_sequence, up.depth + 1 FROM sessions AS s JOIN up ON s.sid = up.parent_sid)
			SELECT sid, fork_sequence FROM up ORDER BY depth`, sess.parent)
		if err != nil {
			return sessionRow{}, nil, err
		}
		var l store.Link
		if _, err := pgx.ForEachRow(rows, []any{&l.SID, &l.Fork}, func() error {
			chain = append(chain, l)
			return nil
		}); err != nil {
			return sessionRow{}, nil, err
		}
	}
	return sess, store.Segments(chain, sess.head), nil
}

// ForkSession creates sess as a fork of parentID before sequence before
// (store.Forker): one row, whatever the prefix's length.
func (s *Store) ForkSession(ctx context.Context, parentID string, before int64, sess store.Session) (store.Session, error) {
	if sess.SessionID == "" {
		return store.Session{}, synccore.Errorf(synccore.CodeBadRequest, "session_id is empty")
	}
	if sess.CreatedAt == 0 {
		sess.CreatedAt = nowMillis()
	}
	if sess.UpdatedAt == 0 {
		sess.UpdatedAt = sess.CreatedAt
	}
	var out store.Session
	err := s.write(ctx, func(tx pgx.Tx) error {
		parent, _, err := path(ctx, tx, parentID, true)
		if err != nil {
			return err
		}
		if err := store.CheckForkBefore(before, parent.head); err != nil {
			return err
		}
		// Only the parent's own rows can still be streaming: its
		// ancestors' messages on its path were done when it was forked,
		// and done is final. A message done now stays done.
		var seq int64
		err = tx.QueryRow(ctx, `SELECT sequence FROM messages WHERE sid = $1 AND state = 'streaming' AND sequence < $2
			ORDER BY sequence LIMIT 1`, parent.sid, before).Scan(&seq)
		if err == nil {
			return store.ErrForkNotDone(parentID, seq)
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO sessions (session_id, model, approval_mode, created_at, updated_at, title, owner,
				parent_sid, fork_sequence, root_sid, head_sequence)
			SELECT $1, $2, $3, $4, $5, title, $6, sid, $7, $8, $9 FROM sessions WHERE sid = $10
			ON CONFLICT (session_id) DO NOTHING`,
			sess.SessionID, sess.Model, sess.ApprovalMode, sess.CreatedAt, sess.UpdatedAt, sess.Owner,
			before, parent.rootSID(), before-1, parent.sid)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return synccore.Errorf(synccore.CodeConflict, "session %q already exists", sess.SessionID)
		}
		out, err = scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+sessionFrom+`WHERE s.session_id = $1`, sess.SessionID))
		return err
	})
	return out, err
}

// Branches lists the alternatives at position n of the session's path
// (store.Forker).
func (s *Store) Branches(ctx context.Context, sessionID string, n int64) ([]store.Branch, error) {
	var out []store.Branch
	err := s.read(ctx, func(tx pgx.Tx) error {
		sess, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		if n < 1 || n > sess.head+1 {
			return synccore.Errorf(synccore.CodeBadRequest, "sequence %d is outside 1..%d", n, sess.head+1)
		}
		bs, owners, err := branches(ctx, tx, sess, segs, sessionID, n)
		if err != nil {
			return err
		}
		for i := range bs {
			if owners[i] == 0 {
				continue
			}
			msgs, err := readRange(ctx, tx, owners[i], sessionID, n, n)
			if err != nil {
				return err
			}
			if len(msgs) == 1 {
				m := msgs[0]
				m.SessionID = bs[i].SessionID
				bs[i].Message = &m
			}
		}
		out = bs
		return nil
	})
	return out, err
}

// BranchCounts tells the positions from..to of the session's path that
// have more than one alternative (store.Forker).
func (s *Store) BranchCounts(ctx context.Context, sessionID string, from, to int64) ([]store.BranchCount, error) {
	out := []store.BranchCount{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		sess, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		from, to = max(from, 2), min(to, sess.head+1)
		if from > to {
			return nil
		}
		cands := map[int64]bool{}
		for i, seg := range segs {
			if i > 0 && seg.To+1 >= from && seg.To+1 <= to {
				cands[seg.To+1] = true
			}
		}
		// A position has alternatives only where a fork of the
		// conversation was made before it, or where the path forks.
		rows, err := tx.Query(ctx, `SELECT DISTINCT fork_sequence FROM sessions WHERE root_sid = $1
			AND fork_sequence BETWEEN $2 AND $3`, sess.rootSID(), from, to)
		if err != nil {
			return err
		}
		var n int64
		if _, err := pgx.ForEachRow(rows, []any{&n}, func() error { cands[n] = true; return nil }); err != nil {
			return err
		}
		for n := from; n <= to; n++ {
			if !cands[n] {
				continue
			}
			bs, _, err := branches(ctx, tx, sess, segs, sessionID, n)
			if err != nil {
				return err
			}
			if len(bs) > 1 {
				out = append(out, store.CountOf(n, bs, sessionID))
			}
		}
		return nil
	})
	return out, err
}

// branches computes the alternatives at n (without their messages) and
// the sid owning each one's message (0: none).
func branches(ctx context.Context, tx pgx.Tx, sess sessionRow, segs []store.Segment, sessionID string, n int64) ([]store.Branch, []int64, error) {
	var self int64
	if seg, ok := store.Owner(segs, n); ok {
		self = seg.SID
	}
	if n == 1 {
		return []store.Branch{{SessionID: sessionID}}, []int64{self}, nil
	}
	prev, ok := store.Owner(segs, n-1)
	if !ok {
		return nil, nil, synccore.Errorf(synccore.CodeInternal, "session %q: position %d is outside its path", sessionID, n-1)
	}
	// The sessions sharing the path before n: prev's, and its descendants
	// by forks made at n or later; those made at n own a message there.
	rows, err := tx.Query(ctx, `WITH RECURSIVE g(sid) AS (
			SELECT $1::bigint UNION ALL
			SELECT f.sid FROM sessions AS f JOIN g ON f.parent_sid = g.sid WHERE f.fork_sequence >= $2)
		SELECT s.sid, s.session_id, s.deleted, s.head_sequence, s.updated_at FROM g JOIN sessions AS s ON s.sid = g.sid
		WHERE s.sid = $1 OR s.fork_sequence = $2
		ORDER BY s.sid`, prev.SID, n)
	if err != nil {
		return nil, nil, err
	}
	var group []store.GroupMember
	var g store.GroupMember
	if _, err := pgx.ForEachRow(rows, []any{&g.SID, &g.SessionID, &g.Deleted, &g.Head, &g.UpdatedAt}, func() error {
		if g.SID == sess.sid {
			// The asked session is in its own list even with nothing at n.
			g.Head = max(g.Head, n)
		}
		group = append(group, g)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	return store.BranchesOf(group, n, self, sessionID, func(m store.GroupMember) (string, error) {
		var id string
		err := tx.QueryRow(ctx, `WITH RECURSIVE d(sid) AS (
				SELECT f.sid FROM sessions AS f WHERE f.parent_sid = $1 AND f.fork_sequence > $2
				UNION ALL
				SELECT f.sid FROM sessions AS f JOIN d ON f.parent_sid = d.sid WHERE f.fork_sequence > $2)
			SELECT s.session_id FROM d JOIN sessions AS s ON s.sid = d.sid WHERE NOT s.deleted
			ORDER BY s.updated_at DESC, s.sid DESC LIMIT 1`, m.SID, n).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", nil
		}
		return id, err
	})
}

// readRange reads the rows from..to of one sid as messages of sessionID,
// with their parts.
func readRange(ctx context.Context, tx pgx.Tx, sid int64, sessionID string, from, to int64) ([]synccore.Message, error) {
	out, err := queryMessages(ctx, tx, sessionID, min(to-from+1, 1024),
		`SELECT `+messageColumns+` FROM messages WHERE sid = $1 AND sequence BETWEEN $2 AND $3 ORDER BY sequence`,
		sid, from, to)
	if err != nil {
		return nil, err
	}
	return out, loadParts(ctx, tx, sid, out)
}

// readPath reads the messages from..to of a path (segments newest first),
// oldest first, with their parts.
func readPath(ctx context.Context, tx pgx.Tx, segs []store.Segment, sessionID string, from, to int64) ([]synccore.Message, error) {
	clipped := store.Clip(segs, from, to)
	out := []synccore.Message{}
	for i := len(clipped) - 1; i >= 0; i-- {
		seg := clipped[i]
		msgs, err := readRange(ctx, tx, seg.SID, sessionID, seg.From, seg.To)
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
	}
	return out, nil
}
