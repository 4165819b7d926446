package sqlite

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// RecoverStreaming closes every agent message left streaming by a crash
// (store.RecoverMessage), one transaction per message, and returns the
// recovered messages in session and sequence order. Leased sessions are
// their lease holder's to recover (RecoverLeased).
func (s *Store) RecoverStreaming(ctx context.Context, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error) {
	return s.recover(ctx, nil, mkErr, `SELECT s.session_id, m.message_id FROM messages AS m JOIN sessions AS s USING (sid)
			WHERE m.state = 'streaming' AND s.lease_epoch = 0 ORDER BY m.sid, m.sequence`)
}

// RecoverLeased closes the session's messages left streaming, fenced by l
// (store.Leaser).
func (s *Store) RecoverLeased(ctx context.Context, l store.Lease, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error) {
	return s.recover(ctx, &l, mkErr, `SELECT s.session_id, m.message_id FROM messages AS m JOIN sessions AS s USING (sid)
			WHERE m.state = 'streaming' AND s.session_id = ? ORDER BY m.sequence`, l.SessionID)
}

// recover closes the streaming messages query lists (session id, message
// id), one write transaction each.
func (s *Store) recover(ctx context.Context, fence *store.Lease, mkErr func(m synccore.Message) synccore.Part,
	query string, args ...any) ([]synccore.Message, error) {
	type ref struct{ sessionID, messageID string }
	var refs []ref
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(query, args...)
		if err != nil {
			return err
		}
		for st.Step() {
			refs = append(refs, ref{st.ColumnText(0), st.ColumnText(1)})
		}
		return done(st)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list streaming messages: %w", err)
	}

	out := []synccore.Message{}
	for _, r := range refs {
		var rec synccore.Message
		recovered := false
		err := s.write(ctx, func(c *conn) error {
			sess, err := lookupSession(c, r.sessionID)
			if err != nil {
				return err
			}
			if err := sess.checkFence(r.sessionID, fence); err != nil {
				return err
			}
			m, found, err := loadMessage(c, sess.sid, r.sessionID, r.messageID)
			if err != nil || !found || m.State != synccore.MessageStreaming {
				return err // closed meanwhile: nothing to do
			}
			whole, delta := store.RecoverMessage(m, mkErr)
			// Commit only the changed parts: the others are kept.
			if err := commitMessage(c, &sess, r.sessionID, &delta, m.CreatedAt); err != nil {
				return err
			}
			if err := c.exec(`UPDATE sessions SET updated_at = ? WHERE sid = ?`, nowMillis(), sess.sid); err != nil {
				return err
			}
			rec, recovered = whole, true
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("store: recover message %q of session %q: %w", r.messageID, r.sessionID, err)
		}
		if recovered {
			s.log.Info("recovered streaming message", "session_id", r.sessionID, "message_id", r.messageID,
				"revision", rec.Revision)
			out = append(out, rec)
		}
	}
	return out, nil
}
