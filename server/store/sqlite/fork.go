package sqlite

import (
	"context"
	"sync"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// chainCache keeps, by sid, the chain of a session's ancestors (itself
// first, up to the root): a session's parent and fork sequence never
// change, and a row is removed only with no fork left below it (which
// drops its entry: SQLite may reuse the sid). One process owns the file,
// so the cache is never stale.
type chainCache struct{ m sync.Map } // int64 -> []store.Link

func (cc *chainCache) forget(sid int64) {
	if cc != nil {
		cc.m.Delete(sid)
	}
}

// path returns a session's row and the segments of its path, newest
// first: the session's row, then its ancestors' chain (cached; one point
// read per ancestor the first time), whatever the prefix's length.
func path(c *conn, sessionID string) (sessionRow, []store.Segment, error) {
	sess, err := lookupSession(c, sessionID)
	if err != nil {
		return sessionRow{}, nil, err
	}
	self := store.Link{SID: sess.sid, Fork: sess.fork}
	if sess.parent == 0 {
		return sess, store.Segments([]store.Link{self}, sess.head), nil
	}
	var up []store.Link
	if c.chains != nil {
		if v, ok := c.chains.m.Load(sess.parent); ok {
			up = v.([]store.Link)
		}
	}
	if up == nil {
		if up, err = ancestors(c, sessionID, sess.parent); err != nil {
			return sessionRow{}, nil, err
		}
		if c.chains != nil {
			c.chains.m.Store(sess.parent, up)
		}
	}
	chain := make([]store.Link, 0, len(up)+1)
	chain = append(append(chain, self), up...)
	return sess, store.Segments(chain, sess.head), nil
}

// ancestors reads the chain from sid (a session's parent) up to the root.
func ancestors(c *conn, sessionID string, sid int64) ([]store.Link, error) {
	var chain []store.Link
	for p := sid; p != 0; {
		st, err := c.query(`SELECT parent_sid, fork_sequence FROM sessions WHERE sid = ?`, p)
		if err != nil {
			return nil, err
		}
		if !st.Step() {
			done(st)
			return nil, synccore.Errorf(synccore.CodeInternal, "session %q: an ancestor (sid %d) is missing", sessionID, p)
		}
		next, fork := st.ColumnInt64(0), st.ColumnInt64(1)
		if err := done(st); err != nil {
			return nil, err
		}
		chain = append(chain, store.Link{SID: p, Fork: fork})
		p = next
	}
	return chain, nil
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
	err := s.write(ctx, func(c *conn) error {
		parent, segs, err := path(c, parentID)
		if err != nil {
			return err
		}
		if err := store.CheckForkBefore(before, parent.head); err != nil {
			return err
		}
		// Every message of the parent's ancestors' segments was done when
		// the parent was forked (and done is final): only the parent's own
		// rows can still be streaming (an indexed range read).
		if own, ok := store.Owner(segs, parent.head); ok && own.SID == parent.sid {
			st, err := c.query(`SELECT sequence FROM messages WHERE sid = ? AND state = 'streaming' AND sequence < ?
				ORDER BY sequence LIMIT 1`, parent.sid, before)
			if err != nil {
				return err
			}
			streaming := st.Step()
			seq := st.ColumnInt64(0)
			if err := done(st); err != nil {
				return err
			}
			if streaming {
				return store.ErrForkNotDone(parentID, seq)
			}
		}
		if err := checkFreeID(c, sess.SessionID); err != nil {
			return err
		}
		return c.exec(`INSERT INTO sessions (session_id, model, approval_mode, created_at, updated_at, title, owner,
				parent_sid, fork_sequence, root_sid, head_sequence)
			VALUES (?, ?, ?, ?, ?, (SELECT title FROM sessions WHERE sid = ?), ?, ?, ?, ?, ?)`,
			sess.SessionID, sess.Model, sess.ApprovalMode, sess.CreatedAt, sess.UpdatedAt, parent.sid, sess.Owner,
			parent.sid, before, parent.rootSID(), before-1)
	})
	if err != nil {
		return store.Session{}, err
	}
	return s.Session(ctx, sess.SessionID)
}

// Branches lists the alternatives at position n of the session's path
// (store.Forker).
func (s *Store) Branches(ctx context.Context, sessionID string, n int64) ([]store.Branch, error) {
	var out []store.Branch
	err := s.read(ctx, func(c *conn) error {
		sess, segs, err := path(c, sessionID)
		if err != nil {
			return err
		}
		if n < 1 || n > sess.head+1 {
			return synccore.Errorf(synccore.CodeBadRequest, "sequence %d is outside 1..%d", n, sess.head+1)
		}
		bs, owners, err := branches(c, sess, segs, sessionID, n)
		if err != nil {
			return err
		}
		for i := range bs {
			if owners[i] == 0 {
				continue
			}
			msgs, err := readRange(c, owners[i], sessionID, n, n)
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
	err := s.read(ctx, func(c *conn) error {
		sess, segs, err := path(c, sessionID)
		if err != nil {
			return err
		}
		from, to = max(from, 2), min(to, sess.head+1)
		if from > to {
			return nil
		}
		// A position n has alternatives only where a fork of the
		// conversation was made before n, or where the path itself forks
		// (then the parent's message at n is one).
		cands := map[int64]bool{}
		for i, seg := range segs {
			if i > 0 && seg.To+1 >= from && seg.To+1 <= to {
				cands[seg.To+1] = true
			}
		}
		st, err := c.query(`SELECT DISTINCT fork_sequence FROM sessions WHERE root_sid = ?
			AND fork_sequence BETWEEN ? AND ?`, sess.rootSID(), from, to)
		if err != nil {
			return err
		}
		for st.Step() {
			cands[st.ColumnInt64(0)] = true
		}
		if err := done(st); err != nil {
			return err
		}
		for n := from; n <= to; n++ {
			if !cands[n] {
				continue
			}
			bs, _, err := branches(c, sess, segs, sessionID, n)
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
func branches(c *conn, sess sessionRow, segs []store.Segment, sessionID string, n int64) ([]store.Branch, []int64, error) {
	var self int64
	if seg, ok := store.Owner(segs, n); ok {
		self = seg.SID
	}
	if n == 1 {
		if self == 0 {
			return []store.Branch{{SessionID: sessionID}}, []int64{0}, nil
		}
		return []store.Branch{{SessionID: sessionID}}, []int64{self}, nil
	}
	prev, ok := store.Owner(segs, n-1)
	if !ok {
		return nil, nil, synccore.Errorf(synccore.CodeInternal, "session %q: position %d is outside its path", sessionID, n-1)
	}
	// The sessions sharing the path before n: prev's, and its descendants
	// by forks made at n or later; those made at n own a message there.
	st, err := c.query(`WITH RECURSIVE g(sid) AS (
			SELECT ? UNION ALL
			SELECT f.sid FROM sessions AS f JOIN g ON f.parent_sid = g.sid WHERE f.fork_sequence >= ?)
		SELECT s.sid, s.session_id, s.deleted, s.head_sequence, s.updated_at FROM g JOIN sessions AS s ON s.sid = g.sid
		WHERE s.sid = ? OR s.fork_sequence = ?
		ORDER BY s.sid`, prev.SID, n, prev.SID, n)
	if err != nil {
		return nil, nil, err
	}
	var group []store.GroupMember
	for st.Step() {
		group = append(group, store.GroupMember{SID: st.ColumnInt64(0), SessionID: st.ColumnText(1),
			Deleted: st.ColumnInt(2) != 0, Head: st.ColumnInt64(3), UpdatedAt: st.ColumnInt64(4)})
	}
	if err := done(st); err != nil {
		return nil, nil, err
	}
	// The asked session is in its own list even when it has nothing at n.
	for i := range group {
		if group[i].SID == sess.sid {
			group[i].Head = max(group[i].Head, n)
		}
	}
	return store.BranchesOf(group, n, self, sessionID, func(m store.GroupMember) (string, error) {
		return liveHeir(c, m.SID, n)
	})
}

// liveHeir is the most recently active live session whose path takes
// sid's message at n (a fork of it, or of such a fork, made after n); ""
// if none.
func liveHeir(c *conn, sid, n int64) (string, error) {
	st, err := c.query(`WITH RECURSIVE d(sid) AS (
			SELECT f.sid FROM sessions AS f WHERE f.parent_sid = ? AND f.fork_sequence > ?
			UNION ALL
			SELECT f.sid FROM sessions AS f JOIN d ON f.parent_sid = d.sid WHERE f.fork_sequence > ?)
		SELECT s.session_id FROM d JOIN sessions AS s ON s.sid = d.sid WHERE s.deleted = 0
		ORDER BY s.updated_at DESC, s.sid DESC LIMIT 1`, sid, n, n)
	if err != nil {
		return "", err
	}
	id := ""
	if st.Step() {
		id = st.ColumnText(0)
	}
	return id, done(st)
}

// readRange reads the rows from..to of one sid as messages of sessionID,
// with their parts.
func readRange(c *conn, sid int64, sessionID string, from, to int64) ([]synccore.Message, error) {
	st, err := c.query(`SELECT `+messageColumns+` FROM messages WHERE sid = ? AND sequence BETWEEN ? AND ? ORDER BY sequence`,
		sid, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]synccore.Message, 0, min(to-from+1, 1024))
	for st.Step() {
		out = append(out, scanMessage(st, sessionID))
	}
	if err := done(st); err != nil {
		return nil, err
	}
	return out, loadParts(c, sid, out)
}

// readPath reads the messages from..to of a path (segments newest first),
// oldest first, with their parts.
func readPath(c *conn, segs []store.Segment, sessionID string, from, to int64) ([]synccore.Message, error) {
	clipped := store.Clip(segs, from, to)
	var out []synccore.Message
	for i := len(clipped) - 1; i >= 0; i-- {
		seg := clipped[i]
		msgs, err := readRange(c, seg.SID, sessionID, seg.From, seg.To)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = msgs
		} else {
			out = append(out, msgs...)
		}
	}
	if out == nil {
		out = []synccore.Message{}
	}
	return out, nil
}
