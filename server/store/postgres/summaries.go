package postgres

import (
	"context"
	"errors"

	"github.com/agentsync/agentsync/server/store"
	"github.com/jackc/pgx/v5"
)

// LatestSummary is the summary reaching furthest into the session
// (store.Store).
func (s *Store) LatestSummary(ctx context.Context, sessionID string) (sum store.Summary, ok bool, err error) {
	err = s.read(ctx, func(tx pgx.Tx) error {
		_, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		// Along the path: a session's own summaries, then those of each
		// ancestor that end inside the prefix the path shares with it.
		for _, seg := range segs {
			var got store.Summary
			err = tx.QueryRow(ctx, `SELECT from_sequence, to_sequence, text, model, created_at FROM summaries
				WHERE sid = $1 AND to_sequence <= $2 ORDER BY to_sequence DESC LIMIT 1`, seg.SID, seg.To).
				Scan(&got.FromSequence, &got.ToSequence, &got.Text, &got.Model, &got.CreatedAt)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if !ok || got.ToSequence > sum.ToSequence {
				sum, ok = got, true
			}
		}
		return nil
	})
	return sum, ok, err
}

// PutSummary stores sum, replacing one with the same end (store.Store).
func (s *Store) PutSummary(ctx context.Context, sessionID string, sum store.Summary) error {
	if sum.CreatedAt == 0 {
		sum.CreatedAt = nowMillis()
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		sess, err := lookupSession(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if err := store.CheckSummary(sum, sess.head); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO summaries (sid, to_sequence, from_sequence, text, model, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (sid, to_sequence) DO UPDATE SET from_sequence = excluded.from_sequence,
				text = excluded.text, model = excluded.model, created_at = excluded.created_at`,
			sess.sid, sum.ToSequence, sum.FromSequence, sum.Text, sum.Model, sum.CreatedAt)
		return err
	})
}
