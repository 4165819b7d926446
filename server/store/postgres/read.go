package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
)

const messageColumns = `sequence, message_id, revision, role, state, turn_id, visibility, created_at, part_count`

func scanMessage(row pgx.Row, sessionID string) (synccore.Message, error) {
	m := synccore.Message{SessionID: sessionID}
	var role, state, visibility string
	var partCount int64
	if err := row.Scan(&m.Sequence, &m.MessageID, &m.Revision, &role, &state, &m.TurnID, &visibility,
		&m.CreatedAt, &partCount); err != nil {
		return m, err
	}
	m.Role, m.State, m.Visibility = synccore.Role(role), synccore.MessageState(state), synccore.Visibility(visibility)
	// Never nil: a nil slice reaches JavaScript as null.
	m.Parts = make([]synccore.Part, 0, partCount)
	return m, nil
}

// queryMessages reads the messages a query returns, without their parts.
func queryMessages(ctx context.Context, tx pgx.Tx, sessionID string, capacity int64, query string, args ...any) ([]synccore.Message, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]synccore.Message, 0, capacity)
	for rows.Next() {
		m, err := scanMessage(rows, sessionID)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Page queries over one segment of a path (sid, below, from), newest
// first, one more row than the page to learn has_more.
const (
	pageVisibleSQL = `SELECT ` + messageColumns + ` FROM messages
		WHERE sid = $1 AND visibility = 'visible' AND sequence < $2 AND sequence >= $3
		ORDER BY sequence DESC LIMIT $4`
	pageAllSQL = `SELECT ` + messageColumns + ` FROM messages
		WHERE sid = $1 AND sequence < $2 AND sequence >= $3
		ORDER BY sequence DESC LIMIT $4`
)

// Messages reads one page of a session's path from a single snapshot
// (store.Store).
func (s *Store) Messages(ctx context.Context, sessionID string, q store.PageQuery) (synccore.MessagePage, error) {
	limit := store.PageLimit(q.Limit)
	var page synccore.MessagePage
	err := s.read(ctx, func(tx pgx.Tx) error {
		sess, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		// total is every message the session's path holds (its head:
		// sequences are gapless), internal ones included; include_internal
		// filters the items only.
		total, query := sess.head, pageAllSQL
		if !q.IncludeInternal {
			query = pageVisibleSQL
		}
		items := make([]synccore.Message, 0, limit+1)
		for _, seg := range store.Clip(segs, 1, store.PageBefore(q, sess.head)-1) {
			if len(items) > limit {
				break
			}
			more, err := queryMessages(ctx, tx, sessionID, 0, query, seg.SID, seg.To+1, seg.From, limit+1-len(items))
			if err != nil {
				return err
			}
			items = append(items, more...)
		}
		page = store.PageOf(total, items, limit)
		return store.Runs(segs, page.Items, func(sid int64, run []synccore.Message) error {
			return loadParts(ctx, tx, sid, run)
		})
	})
	if err != nil {
		return synccore.MessagePage{}, err
	}
	return page, nil
}

// Message reads one message of the session's path with all its parts
// (store.Store).
func (s *Store) Message(ctx context.Context, sessionID, messageID string) (synccore.Message, error) {
	var out synccore.Message
	err := s.read(ctx, func(tx pgx.Tx) error {
		_, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		for _, seg := range segs {
			m, found, err := loadMessage(ctx, tx, seg.SID, sessionID, messageID)
			if err != nil {
				return err
			}
			if found && m.Sequence >= seg.From && m.Sequence <= seg.To {
				out = m
				return nil
			}
		}
		return store.ErrNoMessage(sessionID, messageID)
	})
	return out, err
}

// History reads every message of a session from one snapshot (store.Store).
func (s *Store) History(ctx context.Context, sessionID string) ([]synccore.Message, error) {
	return s.Range(ctx, sessionID, 1, 1<<62)
}

// Range reads the messages from..to of the session's path from one
// snapshot (store.Store).
func (s *Store) Range(ctx context.Context, sessionID string, from, to int64) ([]synccore.Message, error) {
	var out []synccore.Message
	err := s.read(ctx, func(tx pgx.Tx) error {
		sess, segs, err := path(ctx, tx, sessionID, false)
		if err != nil {
			return err
		}
		from, to = max(from, 1), min(to, sess.head)
		if from > to {
			out = []synccore.Message{}
			return nil
		}
		out, err = readPath(ctx, tx, segs, sessionID, from, to)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// loadMessage reads one message by id within the caller's transaction.
func loadMessage(ctx context.Context, tx pgx.Tx, sid int64, sessionID, messageID string) (synccore.Message, bool, error) {
	m, err := scanMessage(tx.QueryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE sid = $1 AND message_id = $2`,
		sid, messageID), sessionID)
	if errors.Is(err, pgx.ErrNoRows) {
		return synccore.Message{}, false, nil
	}
	if err != nil {
		return synccore.Message{}, false, err
	}
	one := []synccore.Message{m}
	if err := loadParts(ctx, tx, sid, one); err != nil {
		return synccore.Message{}, false, err
	}
	return one[0], true, nil
}

// loadParts fills the parts of items (sorted by sequence) with one range
// query. Parts of messages in the range but not in items (internal ones on
// a visible-only page) are skipped.
func loadParts(ctx context.Context, tx pgx.Tx, sid int64, items []synccore.Message) error {
	if len(items) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT msg_sequence, body FROM parts
		WHERE sid = $1 AND msg_sequence BETWEEN $2 AND $3
		ORDER BY msg_sequence, sequence`,
		sid, items[0].Sequence, items[len(items)-1].Sequence)
	if err != nil {
		return err
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var seq int64
		var body []byte
		if err := rows.Scan(&seq, &body); err != nil {
			return err
		}
		for i < len(items) && items[i].Sequence < seq {
			i++
		}
		if i == len(items) {
			break
		}
		if items[i].Sequence != seq {
			continue
		}
		p, err := wire.DecodePart(body)
		if err != nil {
			return fmt.Errorf("postgres store: decode part body: %w", err)
		}
		items[i].Parts = append(items[i].Parts, p)
	}
	return rows.Err()
}
