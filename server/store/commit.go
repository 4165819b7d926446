package store

import (
	"context"
	"slices"

	"github.com/agentsync/agentsync/synccore"
)

// Commit writes one checkpoint atomically: for each message (in order) its
// header and the given parts, upserted by part_id (parts not given are
// kept). A new message must have sequence = head + 1 and revision 1; an
// existing one must have revision = stored + 1 and must not be done. Any
// violation returns a typed *synccore.Error and nothing of the batch is
// written. CreatedAt is the store's: a new message's zero CreatedAt becomes
// now and an existing message keeps its stored one; both are written back
// into msgs so the caller publishes exactly what was stored.
func (s *Store) Commit(ctx context.Context, sessionID string, msgs []synccore.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	now := nowMillis()
	return s.write(ctx, func(c *conn) error {
		sess, err := lookupSession(c, sessionID)
		if err != nil {
			return err
		}
		for i := range msgs {
			if err := commitMessage(c, &sess, sessionID, &msgs[i], now); err != nil {
				return err
			}
		}
		if err := titleFromFirstUserMessage(c, sess.sid, msgs); err != nil {
			return err
		}
		return c.exec(`UPDATE sessions SET head_sequence = ?, visible_count = ?, updated_at = ? WHERE sid = ?`,
			sess.head, sess.visibleCount, now, sess.sid)
	})
}

// storedHeader is what a commit checks a message against.
type storedHeader struct {
	sequence   int64
	revision   int64
	role       synccore.Role
	state      synccore.MessageState
	visibility synccore.Visibility
	createdAt  int64
	partCount  int64
}

func (h storedHeader) done() bool {
	return h.role == synccore.RoleUser || h.state == synccore.MessageDone
}

// commitMessage validates and writes one message inside the caller's
// transaction, advancing sess for a new message.
func commitMessage(c *conn, sess *sessionRow, sessionID string, m *synccore.Message, now int64) error {
	if err := validateHeader(sessionID, m); err != nil {
		return err
	}
	old, found, err := lookupHeader(c, sess.sid, m.MessageID)
	if err != nil {
		return err
	}
	if !found {
		if m.Sequence != sess.head+1 {
			return synccore.Errorf(synccore.CodeConflict,
				"new message %q has sequence %d, the session's next is %d", m.MessageID, m.Sequence, sess.head+1)
		}
		if m.Revision != 1 {
			return synccore.Errorf(synccore.CodeInvalidMessage,
				"new message %q has revision %d, want 1", m.MessageID, m.Revision)
		}
		if m.CreatedAt == 0 {
			m.CreatedAt = now
		}
	} else {
		if err := checkUpdate(old, m); err != nil {
			return err
		}
		m.CreatedAt = old.createdAt
	}

	count, err := upsertParts(c, sess.sid, m, old.partCount, found)
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
		return writeParts(c, sess.sid, m)
	}
	if err := c.exec(`UPDATE messages SET revision = ?, state = ?, turn_id = ?, part_count = ?
			WHERE sid = ? AND sequence = ?`,
		m.Revision, string(m.State), m.TurnID, count, sess.sid, old.sequence); err != nil {
		return err
	}
	return writeParts(c, sess.sid, m)
}

// validateHeader checks what a message must satisfy on its own.
func validateHeader(sessionID string, m *synccore.Message) error {
	bad := func(format string, args ...any) error {
		return synccore.Errorf(synccore.CodeInvalidMessage, "message %q: "+format, append([]any{m.MessageID}, args...)...)
	}
	switch {
	case m.MessageID == "":
		return synccore.Errorf(synccore.CodeInvalidMessage, "message_id is empty")
	case m.SessionID != "" && m.SessionID != sessionID:
		return bad("belongs to session %q, not %q", m.SessionID, sessionID)
	case m.Sequence < 1:
		return bad("sequence %d is not positive", m.Sequence)
	case m.Visibility != synccore.VisibilityVisible && m.Visibility != synccore.VisibilityInternal:
		return bad("unknown visibility %q", m.Visibility)
	}
	switch m.Role {
	case synccore.RoleUser:
		if m.State != "" {
			return bad("a user message has no state, got %q", m.State)
		}
	case synccore.RoleAgent:
		if m.State != synccore.MessageStreaming && m.State != synccore.MessageDone {
			return bad("unknown agent state %q", m.State)
		}
	default:
		return bad("unknown role %q", m.Role)
	}
	return nil
}

// checkUpdate enforces the rules for a new revision of a stored message.
func checkUpdate(old storedHeader, m *synccore.Message) error {
	switch {
	case old.done():
		return synccore.Errorf(synccore.CodeDoneIsFinal, "message %q is done and can never change", m.MessageID)
	case m.Sequence != old.sequence:
		return synccore.Errorf(synccore.CodeSequenceChanged,
			"message %q has sequence %d, stored %d", m.MessageID, m.Sequence, old.sequence)
	case m.Role != old.role:
		return synccore.Errorf(synccore.CodeInvalidMessage, "message %q changed role from %q to %q", m.MessageID, old.role, m.Role)
	case m.Visibility != old.visibility:
		return synccore.Errorf(synccore.CodeInvalidMessage,
			"message %q changed visibility from %q to %q", m.MessageID, old.visibility, m.Visibility)
	case m.Revision <= old.revision:
		return synccore.Errorf(synccore.CodeRevisionBackward,
			"message %q: revision %d is not newer than stored revision %d", m.MessageID, m.Revision, old.revision)
	case m.Revision != old.revision+1:
		return synccore.Errorf(synccore.CodeConflict,
			"message %q: revision %d skips past stored revision %d", m.MessageID, m.Revision, old.revision)
	}
	return nil
}

func lookupHeader(c *conn, sid int64, messageID string) (storedHeader, bool, error) {
	st, err := c.query(`SELECT sequence, revision, role, state, visibility, part_count, created_at
		FROM messages WHERE sid = ? AND message_id = ?`, sid, messageID)
	if err != nil {
		return storedHeader{}, false, err
	}
	var h storedHeader
	found := st.Step()
	if found {
		h = storedHeader{
			sequence:   st.ColumnInt64(0),
			revision:   st.ColumnInt64(1),
			role:       synccore.Role(st.ColumnText(2)),
			state:      synccore.MessageState(st.ColumnText(3)),
			visibility: synccore.Visibility(st.ColumnText(4)),
			partCount:  st.ColumnInt64(5),
			createdAt:  st.ColumnInt64(6),
		}
	}
	return h, found, done(st)
}

var knownPartTypes = []synccore.PartType{
	synccore.PartText, synccore.PartReasoning, synccore.PartContext, synccore.PartFile, synccore.PartData,
	synccore.PartTool, synccore.PartInteraction, synccore.PartAction, synccore.PartError,
}

// upsertParts validates the given parts of m against the stored ones and
// returns the message's part count afterwards. Part ids are unique in a
// message and keep their sequence forever; new parts must continue the
// message's gapless 1-based sequence (count+1, count+2...).
func upsertParts(c *conn, sid int64, m *synccore.Message, count int64, exists bool) (int64, error) {
	var newSeqs []int64
	for i := range m.Parts {
		p := &m.Parts[i]
		switch {
		case p.PartID == "":
			return 0, synccore.Errorf(synccore.CodeInvalidPart, "message %q: part %d has no part_id", m.MessageID, i)
		case p.Sequence < 1:
			return 0, synccore.Errorf(synccore.CodeInvalidPart, "message %q: part %q has sequence %d", m.MessageID, p.PartID, p.Sequence)
		case !slices.Contains(knownPartTypes, p.Type):
			return 0, synccore.Errorf(synccore.CodeUnknownPartType, "message %q: part %q has unknown type %q", m.MessageID, p.PartID, p.Type)
		}
		for j := range i {
			if m.Parts[j].PartID == p.PartID || m.Parts[j].Sequence == p.Sequence {
				return 0, synccore.Errorf(synccore.CodeInvalidMessage,
					"message %q: parts %q and %q repeat an id or a sequence", m.MessageID, m.Parts[j].PartID, p.PartID)
			}
		}
		stored := int64(0)
		if exists {
			var err error
			if stored, err = lookupPartSequence(c, sid, m.Sequence, p.PartID); err != nil {
				return 0, err
			}
		}
		switch {
		case stored == 0:
			newSeqs = append(newSeqs, p.Sequence)
		case stored != p.Sequence:
			return 0, synccore.Errorf(synccore.CodeSequenceChanged,
				"message %q: part %q has sequence %d, stored %d", m.MessageID, p.PartID, p.Sequence, stored)
		}
	}
	slices.Sort(newSeqs)
	for i, seq := range newSeqs {
		want := count + int64(i) + 1
		if seq == want {
			continue
		}
		if seq <= count {
			return 0, synccore.Errorf(synccore.CodeSequenceChanged,
				"message %q: part sequence %d already belongs to another part", m.MessageID, seq)
		}
		return 0, synccore.Errorf(synccore.CodeInvalidMessage,
			"message %q: new part sequence %d leaves a gap (next is %d)", m.MessageID, seq, want)
	}
	return count + int64(len(newSeqs)), nil
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
