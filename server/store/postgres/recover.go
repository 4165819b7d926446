package postgres

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

// RecoverStreaming closes every agent message left streaming by a crash
// (store.RecoverMessage), one transaction per message (store.Store).
// Leased sessions are their lease holder's to recover (RecoverLeased): on
// several nodes, a starting node must not close another node's live turn.
func (s *Store) RecoverStreaming(ctx context.Context, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error) {
	return s.recover(ctx, nil, mkErr, `SELECT s.session_id, m.message_id FROM messages AS m JOIN sessions AS s USING (sid)
			WHERE m.state = 'streaming' AND s.lease_epoch = 0 ORDER BY m.sid, m.sequence`)
}

// RecoverLeased closes the session's messages left streaming, fenced by l
// (store.Leaser).
func (s *Store) RecoverLeased(ctx context.Context, l store.Lease, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error) {
	return s.recover(ctx, &l, mkErr, `SELECT s.session_id, m.message_id FROM messages AS m JOIN sessions AS s USING (sid)
			WHERE m.state = 'streaming' AND s.session_id = $1 ORDER BY m.sequence`, l.SessionID)
}

// recover closes the streaming messages query lists (session id, message
// id), one write transaction each.
func (s *Store) recover(ctx context.Context, fence *store.Lease, mkErr func(m synccore.Message) synccore.Part,
	query string, args ...any) ([]synccore.Message, error) {
	type ref struct{ sessionID, messageID string }
	var refs []ref
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		var r ref
		_, err = pgx.ForEachRow(rows, []any{&r.sessionID, &r.messageID}, func() error {
			refs = append(refs, r)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: list streaming messages: %w", err)
	}
	out := []synccore.Message{}
	for _, r := range refs {
		rec, recovered, err := s.recoverMessage(ctx, r.sessionID, r.messageID, fence, mkErr)
		if err != nil {
			return out, fmt.Errorf("postgres store: recover message %q of session %q: %w", r.messageID, r.sessionID, err)
		}
		if recovered {
			s.log.Info("recovered streaming message", "session_id", r.sessionID, "message_id", r.messageID,
				"revision", rec.Revision)
			out = append(out, rec)
		}
	}
	return out, nil
}

// recoverMessage closes one streaming message in one transaction; a
// message closed meanwhile is left alone (recovered=false).
func (s *Store) recoverMessage(ctx context.Context, sessionID, messageID string, fence *store.Lease,
	mkErr func(m synccore.Message) synccore.Part) (rec synccore.Message, recovered bool, err error) {
	err = s.write(ctx, func(tx pgx.Tx) error {
		sess, err := lockSession(ctx, tx, sessionID, fence)
		if err != nil {
			return err
		}
		m, found, err := loadMessage(ctx, tx, sess.sid, sessionID, messageID)
		if err != nil || !found || m.State != synccore.MessageStreaming {
			return err
		}
		whole, delta := store.RecoverMessage(m, mkErr)
		// Commit only the changed parts: the others are kept.
		if err := commitIn(ctx, tx, sessionID, fence, []synccore.Message{delta}, nowMillis(), false); err != nil {
			return err
		}
		rec, recovered = whole, true
		return nil
	})
	return rec, recovered, err
}
