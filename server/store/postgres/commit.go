package postgres

import (
	"context"
	"errors"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

// Commit writes one checkpoint in one transaction (store.Store): for each
// message (in order) its header and the given parts, upserted by part_id
// (parts not given are kept). The session's row is locked first, so the
// checks see the latest head on every node.
func (s *Store) Commit(ctx context.Context, sessionID string, msgs []synccore.Message) error {
	return s.commit(ctx, sessionID, nil, msgs)
}

// CommitLeased is Commit fenced by l (store.Leaser): the database refuses
// it unless l's epoch is the session's.
func (s *Store) CommitLeased(ctx context.Context, l store.Lease, msgs []synccore.Message) error {
	return s.commit(ctx, l.SessionID, &l, msgs)
}

func (s *Store) commit(ctx context.Context, sessionID string, fence *store.Lease, msgs []synccore.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	now := nowMillis()
	return s.write(ctx, func(tx pgx.Tx) error {
		sess, err := lockSession(ctx, tx, sessionID, fence)
		if err != nil {
			return err
		}
		for i := range msgs {
			if err := commitMessage(ctx, tx, &sess, sessionID, &msgs[i], now); err != nil {
				return err
			}
		}
		if title := store.BatchTitle(msgs); title != "" {
			// A title a user or a model set is never replaced.
			if _, err := tx.Exec(ctx, `UPDATE sessions SET title = $1 WHERE sid = $2 AND title = ''`, title, sess.sid); err != nil {
				return err
			}
		}
		// head_sequence and visible_count are the insert trigger's.
		_, err = tx.Exec(ctx, `UPDATE sessions SET updated_at = $1 WHERE sid = $2`, now, sess.sid)
		return err
	})
}

// commitMessage validates and writes one message inside the caller's
// transaction, advancing sess for a new message.
func commitMessage(ctx context.Context, tx pgx.Tx, sess *sessionRow, sessionID string, m *synccore.Message, now int64) error {
	if err := store.ValidateHeader(sessionID, m); err != nil {
		return err
	}
	old, found, err := lookupHeader(ctx, tx, sess.sid, m.MessageID)
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
	var stored map[string]int64
	if found {
		if stored, err = partSequences(ctx, tx, sess.sid, m); err != nil {
			return err
		}
	}
	count, err := store.CheckParts(m, old.PartCount, found, func(partID string) (int64, error) {
		return stored[partID], nil
	})
	if err != nil {
		return err
	}
	if !found {
		// The header goes first: parts reference it (foreign key).
		if _, err := tx.Exec(ctx, `INSERT INTO messages (sid, sequence, message_id, revision, role, state, turn_id,
				visibility, created_at, part_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			sess.sid, m.Sequence, m.MessageID, m.Revision, string(m.Role), string(m.State), m.TurnID,
			string(m.Visibility), m.CreatedAt, count); err != nil {
			return err
		}
		sess.head = m.Sequence
	} else if _, err := tx.Exec(ctx, `UPDATE messages SET revision = $1, state = $2, turn_id = $3, part_count = $4
			WHERE sid = $5 AND sequence = $6`,
		m.Revision, string(m.State), m.TurnID, count, sess.sid, old.Sequence); err != nil {
		return err
	}
	return writeParts(ctx, tx, sess.sid, m)
}

func lookupHeader(ctx context.Context, tx pgx.Tx, sid int64, messageID string) (store.Header, bool, error) {
	var h store.Header
	var role, state, visibility string
	err := tx.QueryRow(ctx, `SELECT sequence, revision, role, state, visibility, part_count, created_at
		FROM messages WHERE sid = $1 AND message_id = $2`, sid, messageID).
		Scan(&h.Sequence, &h.Revision, &role, &state, &visibility, &h.PartCount, &h.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Header{}, false, nil
	}
	if err != nil {
		return store.Header{}, false, err
	}
	h.Role, h.State, h.Visibility = synccore.Role(role), synccore.MessageState(state), synccore.Visibility(visibility)
	return h, true, nil
}

// partSequences returns the stored sequences of m's given parts, by id, in
// one query.
func partSequences(ctx context.Context, tx pgx.Tx, sid int64, m *synccore.Message) (map[string]int64, error) {
	ids := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		ids[i] = p.PartID
	}
	rows, err := tx.Query(ctx, `SELECT part_id, sequence FROM parts WHERE sid = $1 AND msg_sequence = $2 AND part_id = ANY($3)`,
		sid, m.Sequence, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(ids))
	var id string
	var seq int64
	_, err = pgx.ForEachRow(rows, []any{&id, &seq}, func() error {
		out[id] = seq
		return nil
	})
	return out, err
}

// writeParts upserts the (already validated) parts of m in one round trip.
func writeParts(ctx context.Context, tx pgx.Tx, sid int64, m *synccore.Message) error {
	if len(m.Parts) == 0 {
		return nil
	}
	var batch pgx.Batch
	for i := range m.Parts {
		p := &m.Parts[i]
		body, err := synccore.AppendPart(nil, p)
		if err != nil {
			return synccore.Errorf(synccore.CodeInvalidPart, "part %q does not encode: %v", p.PartID, err)
		}
		batch.Queue(`INSERT INTO parts (sid, msg_sequence, sequence, part_id, body) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (sid, msg_sequence, sequence) DO UPDATE SET body = excluded.body`,
			sid, m.Sequence, p.Sequence, p.PartID, body)
	}
	return tx.SendBatch(ctx, &batch).Close()
}
