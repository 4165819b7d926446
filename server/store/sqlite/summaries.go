package sqlite

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// LatestSummary is the summary reaching furthest into the session;
// ok=false if it has none. CodeNotFound for an unknown session.
func (s *Store) LatestSummary(ctx context.Context, sessionID string) (sum store.Summary, ok bool, err error) {
	err = s.read(ctx, func(c *conn) error {
		_, segs, err := path(c, sessionID)
		if err != nil {
			return err
		}
		// Along the path: a session's own summaries, then those of each
		// ancestor that end inside the prefix the path shares with it.
		for _, seg := range segs {
			st, err := c.query(`SELECT from_sequence, to_sequence, text, model, created_at FROM summaries
				WHERE sid = ? AND to_sequence <= ? ORDER BY to_sequence DESC LIMIT 1`, seg.SID, seg.To)
			if err != nil {
				return err
			}
			if st.Step() && (!ok || st.ColumnInt64(1) > sum.ToSequence) {
				ok = true
				sum = store.Summary{FromSequence: st.ColumnInt64(0), ToSequence: st.ColumnInt64(1), Text: st.ColumnText(2),
					Model: st.ColumnText(3), CreatedAt: st.ColumnInt64(4)}
			}
			if err := done(st); err != nil {
				return err
			}
		}
		return nil
	})
	return sum, ok, err
}

// PutSummary stores sum (replacing one with the same end). Its range must
// lie within the session's committed messages.
func (s *Store) PutSummary(ctx context.Context, sessionID string, sum store.Summary) error {
	if sum.CreatedAt == 0 {
		sum.CreatedAt = nowMillis()
	}
	return s.write(ctx, func(c *conn) error {
		sess, err := lookupSession(c, sessionID)
		if err != nil {
			return err
		}
		if err := store.CheckSummary(sum, sess.head); err != nil {
			return err
		}
		return c.exec(`INSERT OR REPLACE INTO summaries (sid, to_sequence, from_sequence, text, model, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, sess.sid, sum.ToSequence, sum.FromSequence, sum.Text, sum.Model, sum.CreatedAt)
	})
}

// Range reads the messages from..to (inclusive), internal ones included,
// oldest first, from one snapshot: the composer reads the recent end of a
// session this way, a bounded slice at a time, never the whole history.
func (s *Store) Range(ctx context.Context, sessionID string, from, to int64) ([]synccore.Message, error) {
	var out []synccore.Message
	err := s.read(ctx, func(c *conn) error {
		sess, segs, err := path(c, sessionID)
		if err != nil {
			return err
		}
		from, to = max(from, 1), min(to, sess.head)
		if from > to {
			return nil
		}
		out, err = readPath(c, segs, sessionID, from, to)
		return err
	})
	return out, err
}
