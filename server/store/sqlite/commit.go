package sqlite

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Commit writes one checkpoint in one write transaction (store.Store):
// for each message (in order) its header and the given parts, upserted by
// part_id (parts not given are kept).
func (s *Store) Commit(ctx context.Context, sessionID string, msgs []synccore.Message) error {
	return s.commit(ctx, sessionID, nil, msgs)
}

// CommitLeased is Commit fenced by l (store.Leaser).
func (s *Store) CommitLeased(ctx context.Context, l store.Lease, msgs []synccore.Message) error {
	return s.commit(ctx, l.SessionID, &l, msgs)
}

func (s *Store) commit(ctx context.Context, sessionID string, fence *store.Lease, msgs []synccore.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	now := nowMillis()
	return s.write(ctx, func(c *conn) error {
		sess, err := lookupSession(c, sessionID)
		if err != nil {
			return err
		}
		if err := sess.checkFence(sessionID, fence); err != nil {
			return err
		}
		read := sess
		for i := range msgs {
			if err := commitMessage(c, &sess, sessionID, &msgs[i], now); err != nil {
				return err
			}
		}
		if title := store.BatchTitle(msgs); title != "" {
			// A title a user or a model set is never replaced.
			if err := c.exec(`UPDATE sessions SET title = ? WHERE sid = ? AND title = ''`, title, sess.sid); err != nil {
				return err
			}
		}
		// A checkpoint that changes nothing of the session's row (one
		// that extends a streaming message, within store.TouchEvery)
		// leaves it alone: no page of the table or its indexes written.
		if sess.head == read.head && sess.visibleCount == read.visibleCount && !store.Touches(sess.moved, sess.updatedAt, now) {
			return nil
		}
		return c.exec(`UPDATE sessions SET head_sequence = ?, visible_count = ?, updated_at = ? WHERE sid = ?`,
			sess.head, sess.visibleCount, now, sess.sid)
	})
}

// commitMessage validates and writes one message inside the caller's
// transaction, advancing sess for a new message.
func commitMessage(c *conn, sess *sessionRow, sessionID string, m *synccore.Message, now int64) error {
	if err := store.ValidateHeader(sessionID, m); err != nil {
		return err
	}
	old, found, err := lookupHeader(c, sess.sid, m.MessageID)
	if err != nil {
		return err
	}
	if !found {
		if err := store.CheckNew(m, sess.head); err != nil {
			return err
		}
		if m.CreatedAt == 0 {
			m.CreatedAt = now
		}
	} else {
		if err := old.CheckUpdate(m); err != nil {
			return err
		}
		m.CreatedAt = old.CreatedAt
	}

	sess.moved = sess.moved || store.Moves(m, old, found)
	count, err := store.CheckParts(m, old.PartCount, found, func(partID string) (int64, error) {
		return lookupPartSequence(c, sess.sid, m.Sequence, partID)
	})
	if err != nil {
		return err
	}
	if !found {
		// The header goes first: parts reference it (foreign key).
		if err := c.exec(`INSERT INTO messages (sid, sequence, message_id, revision, role, state, turn_id,
				visibility, created_at, part_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sess.sid, m.Sequence, m.MessageID, m.Revision, string(m.Role), string(m.State), m.TurnID,
			string(m.Visibility), m.CreatedAt, count); err != nil {
			return err
		}
		sess.head = m.Sequence
		if m.Visibility == synccore.VisibilityVisible {
			sess.visibleCount++
		}
		if err := writeParts(c, sess.sid, m); err != nil {
			return err
		}
		return indexMessage(c, sess.sid, m)
	}
	if err := c.exec(`UPDATE messages SET revision = ?, state = ?, turn_id = ?, part_count = ?
			WHERE sid = ? AND sequence = ?`,
		m.Revision, string(m.State), m.TurnID, count, sess.sid, old.Sequence); err != nil {
		return err
	}
	if err := writeParts(c, sess.sid, m); err != nil {
		return err
	}
	if old.Done() {
		return nil // indexed when it became done
	}
	return indexMessage(c, sess.sid, m)
}

func lookupHeader(c *conn, sid int64, messageID string) (store.Header, bool, error) {
	st, err := c.query(`SELECT sequence, revision, role, state, visibility, part_count, created_at
		FROM messages WHERE sid = ? AND message_id = ?`, sid, messageID)
	if err != nil {
		return store.Header{}, false, err
	}
	var h store.Header
	found := st.Step()
	if found {
		h = store.Header{
			Sequence:   st.ColumnInt64(0),
			Revision:   st.ColumnInt64(1),
			Role:       synccore.Role(st.ColumnText(2)),
			State:      synccore.MessageState(st.ColumnText(3)),
			Visibility: synccore.Visibility(st.ColumnText(4)),
			PartCount:  st.ColumnInt64(5),
			CreatedAt:  st.ColumnInt64(6),
		}
	}
	return h, found, done(st)
}

func lookupPartSequence(c *conn, sid, msgSeq int64, partID string) (int64, error) {
	st, err := c.query(`SELECT sequence FROM parts WHERE sid = ? AND msg_sequence = ? AND part_id = ?`, sid, msgSeq, partID)
	if err != nil {
		return 0, err
	}
	var seq int64
	if st.Step() {
		seq = st.ColumnInt64(0)
	}
	return seq, done(st)
}

// writeParts upserts the (already validated) parts of m.
func writeParts(c *conn, sid int64, m *synccore.Message) error {
	for i := range m.Parts {
		p := &m.Parts[i]
		body, err := c.codec.encode(p)
		if err != nil {
			return err
		}
		if err := c.exec(`INSERT INTO parts (sid, msg_sequence, sequence, part_id, body) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (sid, msg_sequence, sequence) DO UPDATE SET body = excluded.body`,
			sid, m.Sequence, p.Sequence, p.PartID, body); err != nil {
			return err
		}
	}
	return nil
}
