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
		sess, err := lookupSession(c, sessionID)
		if err != nil {
			return err
		}
		st, err := c.query(`SELECT from_sequence, to_sequence, text, model, created_at FROM summaries
			WHERE sid = ? ORDER BY to_sequence DESC LIMIT 1`, sess.sid)
		if err != nil {
			return err
		}
		if ok = st.Step(); ok {
			sum = store.Summary{FromSequence: st.ColumnInt64(0), ToSequence: st.ColumnInt64(1), Text: st.ColumnText(2),
				Model: st.ColumnText(3), CreatedAt: st.ColumnInt64(4)}
		}
		return done(st)
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
		sess, err := lookupSession(c, sessionID)
		if err != nil {
			return err
		}
		from, to = max(from, 1), min(to, sess.head)
		if from > to {
			return nil
		}
		st, err := c.query(`SELECT `+messageColumns+` FROM messages WHERE sid = ? AND sequence BETWEEN ? AND ? ORDER BY sequence`,
			sess.sid, from, to)
		if err != nil {
			return err
		}
		out = make([]synccore.Message, 0, to-from+1)
		for st.Step() {
			out = append(out, scanMessage(st, sessionID))
		}
		if err := done(st); err != nil {
			return err
		}
		return loadParts(c, sess.sid, out)
	})
	return out, err
}
