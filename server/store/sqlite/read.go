package sqlite

import (
	"context"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/ncruces/go-sqlite3"
)

const messageColumns = `sequence, message_id, revision, role, state, turn_id, visibility, created_at, part_count`

func scanMessage(st *sqlite3.Stmt, sessionID string) synccore.Message {
	return synccore.Message{
		SessionID:  sessionID,
		Sequence:   st.ColumnInt64(0),
		MessageID:  st.ColumnText(1),
		Revision:   st.ColumnInt64(2),
		Role:       synccore.Role(st.ColumnText(3)),
		State:      synccore.MessageState(st.ColumnText(4)),
		TurnID:     st.ColumnText(5),
		Visibility: synccore.Visibility(st.ColumnText(6)),
		CreatedAt:  st.ColumnInt64(7),
		// Never nil: a nil slice reaches JavaScript as null.
		Parts: make([]synccore.Part, 0, st.ColumnInt(8)),
	}
}

// Page queries over one segment of a path (sid, below, from), newest
// first, one more row than the page to learn has_more.
const (
	pageVisibleSQL = `SELECT ` + messageColumns + ` FROM messages
		WHERE sid = ? AND visibility = 'visible' AND sequence < ? AND sequence >= ?
		ORDER BY sequence DESC LIMIT ?`
	pageAllSQL = `SELECT ` + messageColumns + ` FROM messages
		WHERE sid = ? AND sequence < ? AND sequence >= ?
		ORDER BY sequence DESC LIMIT ?`
)

// Messages reads one page of a session from a single snapshot: the newest
// q.Limit messages with sequence < q.BeforeSequence (0: up to the head),
// visible ones only unless q.IncludeInternal, oldest first; Total counts
// every message, internal ones included. A Limit <= 0
// reads the default page (50), one over 200 is capped. CodeNotFound if the
// session does not exist.
func (s *Store) Messages(ctx context.Context, sessionID string, q store.PageQuery) (synccore.MessagePage, error) {
	limit := store.PageLimit(q.Limit)
	var page synccore.MessagePage
	err := s.read(ctx, func(c *conn) error {
		sess, segs, err := path(c, sessionID)
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
		// Newest segment first until the page (and one more) is full: a
		// fork's page reads its own rows, then its parent's.
		items := make([]synccore.Message, 0, limit+1)
		before := store.PageBefore(q, sess.head)
		for _, seg := range store.Clip(segs, 1, before-1) {
			if len(items) > limit {
				break
			}
			st, err := c.query(query, seg.SID, seg.To+1, seg.From, limit+1-len(items))
			if err != nil {
				return err
			}
			for st.Step() {
				items = append(items, scanMessage(st, sessionID))
			}
			if err := done(st); err != nil {
				return err
			}
		}
		page = store.PageOf(total, items, limit)
		return store.Runs(segs, page.Items, func(sid int64, run []synccore.Message) error {
			return loadParts(c, sid, run)
		})
	})
	if err != nil {
		return synccore.MessagePage{}, err
	}
	return page, nil
}

// Message reads one message with all its parts. CodeNotFound if the session
// or the message does not exist.
func (s *Store) Message(ctx context.Context, sessionID, messageID string) (synccore.Message, error) {
	var out synccore.Message
	err := s.read(ctx, func(c *conn) error {
		_, segs, err := path(c, sessionID)
		if err != nil {
			return err
		}
		for _, seg := range segs {
			m, found, err := loadMessage(c, seg.SID, sessionID, messageID)
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

// History reads every message of a session's path, internal ones
// included, oldest first, from one snapshot: the canonical input of the
// composer.
func (s *Store) History(ctx context.Context, sessionID string) ([]synccore.Message, error) {
	var out []synccore.Message
	err := s.read(ctx, func(c *conn) error {
		sess, segs, err := path(c, sessionID)
		if err != nil {
			return err
		}
		out, err = readPath(c, segs, sessionID, 1, sess.head)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// loadMessage reads one message by id within the caller's transaction.
func loadMessage(c *conn, sid int64, sessionID, messageID string) (synccore.Message, bool, error) {
	st, err := c.query(`SELECT `+messageColumns+` FROM messages WHERE sid = ? AND message_id = ?`, sid, messageID)
	if err != nil {
		return synccore.Message{}, false, err
	}
	var m synccore.Message
	found := st.Step()
	if found {
		m = scanMessage(st, sessionID)
	}
	if err := done(st); err != nil || !found {
		return synccore.Message{}, false, err
	}
	one := []synccore.Message{m}
	if err := loadParts(c, sid, one); err != nil {
		return synccore.Message{}, false, err
	}
	return one[0], true, nil
}

// loadParts fills the parts of items (sorted by sequence) with one range
// query over the parts table. Parts of messages in the range but not in
// items (internal ones on a visible-only page) are skipped.
func loadParts(c *conn, sid int64, items []synccore.Message) error {
	if len(items) == 0 {
		return nil
	}
	st, err := c.query(`SELECT msg_sequence, body FROM parts
		WHERE sid = ? AND msg_sequence BETWEEN ? AND ?
		ORDER BY msg_sequence, sequence`,
		sid, items[0].Sequence, items[len(items)-1].Sequence)
	if err != nil {
		return err
	}
	i := 0
	for st.Step() {
		seq := st.ColumnInt64(0)
		for i < len(items) && items[i].Sequence < seq {
			i++
		}
		if i == len(items) {
			break
		}
		if items[i].Sequence != seq {
			continue
		}
		m := &items[i]
		m.Parts = append(m.Parts, synccore.Part{})
		if err := c.codec.decode(st.ColumnRawBlob(1), &m.Parts[len(m.Parts)-1]); err != nil {
			done(st)
			return err
		}
	}
	return done(st)
}
