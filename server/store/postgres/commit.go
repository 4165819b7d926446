package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/agentsync/agentsync/internal/wire"
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

// commitAlone is a commit in a transaction of its own (a group of one,
// group.go): two round trips, whatever the batch's size: one pipelined
// batch begins the transaction, locks the session and reads what the
// checks need (every message's stored header and part sequences); once the
// checks passed in Go, a second writes everything and commits. (PostgreSQL
// turns a pipeline's implicit transaction into a regular one at BEGIN; a
// statement that fails makes the server skip the rest of its pipeline,
// COMMIT included.) A commit was a round trip per statement before, 8 for
// one message; a checkpoint is the hottest write a node makes.
func (s *Store) commitAlone(ctx context.Context, sessionID string, fence *store.Lease, msgs []synccore.Message) error {
	if s.closed.Load() {
		return store.ErrClosed()
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.typed(ctx, err)
	}
	// A connection released inside a transaction (a failed commit whose
	// ROLLBACK failed too) is closed by the pool, never reused.
	defer conn.Release()
	err = commitIn(ctx, conn, sessionID, fence, msgs, nowMillis(), true)
	if err != nil {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			_, _ = conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		return s.typed(ctx, err)
	}
	s.commits.Add(1)
	return nil
}

// commitIn checks and writes a commit in two pipelined batches; own says
// whether it begins and commits its transaction (else it runs inside the
// caller's).
func commitIn(ctx context.Context, c batchSender, sessionID string, fence *store.Lease, msgs []synccore.Message, now int64, own bool) error {
	sess, stored, err := readForCommit(ctx, c, sessionID, fence, msgs, own)
	if err != nil {
		return err
	}
	var batch pgx.Batch
	if err := queueWrites(&batch, &sess, sessionID, msgs, stored, now); err != nil {
		return err
	}
	queueTouch(&batch, now, []sessionRow{sess})
	if own {
		batch.Queue(`COMMIT`)
	}
	return c.SendBatch(ctx, &batch).Close()
}

// queueWrites checks the messages of a commit against what readForCommit
// read and queues their writes; the session's updated_at is the caller's
// (queueTouch).
func queueWrites(batch *pgx.Batch, sess *sessionRow, sessionID string, msgs []synccore.Message, stored map[string]*storedMessage, now int64) error {
	for i := range msgs {
		if err := queueMessage(batch, sess, sessionID, &msgs[i], stored, now); err != nil {
			return err
		}
	}
	if title := store.BatchTitle(msgs); title != "" {
		// A title a user or a model set is never replaced.
		batch.Queue(`UPDATE sessions SET title = $1 WHERE sid = $2 AND title = ''`, title, sess.sid)
	}
	return nil
}

// queueTouch moves the updated_at of the sessions a commit (or a group of
// them) wrote to now, in one statement (head_sequence and visible_count
// are the insert trigger's): each one the commit moved (store.Moves), the
// others only when their updated_at, as locked, is store.TouchEvery old.
// A streaming checkpoint mostly queues nothing here: its session's row is
// left as it is, rather than written anew with two index entries.
func queueTouch(batch *pgx.Batch, now int64, sessions []sessionRow) {
	var sids []int64
	for _, s := range sessions {
		if store.Touches(s.moved, s.updatedAt, now) {
			sids = append(sids, s.sid)
		}
	}
	switch len(sids) {
	case 0:
	case 1:
		batch.Queue(`UPDATE sessions SET updated_at = $1 WHERE sid = $2`, now, sids[0])
	default:
		batch.Queue(`UPDATE sessions SET updated_at = $1 WHERE sid = ANY($2)`, now, sids)
	}
}

// batchSender is a pgx.Tx or a connection.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// storedMessage is what the checks of a commit need of a stored message.
type storedMessage struct {
	header store.Header
	parts  map[string]int64 // sequence by part id, of the parts the batch gives
	// texts are the stored parts by sequence (type and text only), read
	// for a message the batch closes: its search text (search.go).
	texts map[int64]synccore.Part
}

// readForCommit locks the session (declaring the transaction's lease
// epoch, see lockSession) and reads the stored state of every message of
// the batch, in one round trip. The header reads run after the lock in
// the same pipeline, so they see the latest commit of any node.
func readForCommit(ctx context.Context, c batchSender, sessionID string, fence *store.Lease, msgs []synccore.Message, begin bool) (sessionRow, map[string]*storedMessage, error) {
	var batch pgx.Batch
	if begin {
		batch.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	}
	reads := queueReads(&batch, sessionID, fence, msgs, lockSessionSQL)
	results := c.SendBatch(ctx, &batch)
	defer results.Close()
	if begin {
		if _, err := results.Exec(); err != nil {
			return sessionRow{}, nil, err
		}
	}
	sess, stored, checkErr, err := reads.scan(results)
	if err != nil {
		return sess, nil, err
	}
	if checkErr != nil {
		return sess, nil, checkErr
	}
	return sess, stored, results.Close()
}

// commitReads are the reads of one commit queued in a batch (queueReads):
// the session's lock, a header lookup per message id and the stored texts
// of each message the commit may close.
type commitReads struct {
	sessionID string
	fence     *store.Lease
	order     []string            // message ids, in the order of their lookups
	partIDs   map[string][]string // by message id: the part ids its lookup asks for
	closing   []string            // ids of the messages whose texts are read
}

// headerSQL reads a stored message's header and the sequences of the
// given part ids ($3), in their order (NULL for a part it does not hold).
// Each part is one probe of the (sid, msg_sequence, part_id) key: as
// part_id = ANY($3), the planner (without statistics, as on a new
// database) scanned every part of the message and filtered, a cost that
// grew with the message's parts on every checkpoint.
const headerSQL = `SELECT m.sequence, m.revision, m.role, m.state, m.visibility, m.part_count, m.created_at,
		ARRAY(SELECT (SELECT p.sequence FROM parts p WHERE p.sid = m.sid AND p.msg_sequence = m.sequence AND p.part_id = u.id)
			FROM unnest($3::text[]) WITH ORDINALITY AS u(id, n) ORDER BY u.n)
	FROM messages m JOIN sessions s ON s.sid = m.sid
	WHERE s.session_id = $1 AND m.message_id = $2`

// headerOnePartSQL is headerSQL for one part id ($3, text), a checkpoint's
// usual case: one probe, without the array's function scan and sort.
const headerOnePartSQL = `SELECT m.sequence, m.revision, m.role, m.state, m.visibility, m.part_count, m.created_at,
		ARRAY[(SELECT p.sequence FROM parts p WHERE p.sid = m.sid AND p.msg_sequence = m.sequence AND p.part_id = $3)]
	FROM messages m JOIN sessions s ON s.sid = m.sid
	WHERE s.session_id = $1 AND m.message_id = $2`

// queueReads queues the reads of a commit to sessionID, the lock first
// (lockSQL: lockSessionSQL, or its NOWAIT form in a group).
func queueReads(batch *pgx.Batch, sessionID string, fence *store.Lease, msgs []synccore.Message, lockSQL string) commitReads {
	epoch := int64(0)
	if fence != nil {
		epoch = fence.Epoch
	}
	batch.Queue(lockSQL, sessionID, strconv.FormatInt(epoch, 10))
	// One lookup per message id, for the parts every occurrence gives.
	r := commitReads{sessionID: sessionID, fence: fence}
	partIDs := map[string][]string{}
	for i := range msgs {
		id := msgs[i].MessageID
		if _, ok := partIDs[id]; !ok {
			r.order = append(r.order, id)
		}
		for _, p := range msgs[i].Parts {
			partIDs[id] = append(partIDs[id], p.PartID)
		}
		if partIDs[id] == nil {
			partIDs[id] = []string{}
		}
	}
	r.partIDs = partIDs
	for _, id := range r.order {
		if ids := partIDs[id]; len(ids) == 1 {
			batch.Queue(headerOnePartSQL, sessionID, id, ids[0])
		} else {
			batch.Queue(headerSQL, sessionID, id, ids)
		}
	}
	// The stored parts of each message the batch may close, for its
	// search text.
	r.closing = closingIDs(msgs)
	for _, id := range r.closing {
		batch.Queue(storedTextsSQL, sessionID, id)
	}
	return r
}

// scan reads the results queueReads queued, every one of them (so that
// the results of what follows in the batch come next): the locked
// session and the stored messages, or checkErr, the commit's refusal by
// the checks (no such session, a lost lease), or err, a failure of the
// batch itself (the database's error, the connection's).
func (r commitReads) scan(results pgx.BatchResults) (sess sessionRow, stored map[string]*storedMessage, checkErr, err error) {
	err = results.QueryRow().Scan(&sess.sid, &sess.head, &sess.visibleCount, &sess.leaseNode, &sess.leaseEpoch,
		&sess.parent, &sess.fork, &sess.root, &sess.updatedAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		sess, checkErr, err = sessionRow{}, store.ErrNoSession(r.sessionID), nil
	case err != nil:
		return sess, nil, nil, err
	default:
		checkErr = store.CheckFence(r.sessionID, r.fence, sess.leaseNode, sess.leaseEpoch)
	}
	stored = make(map[string]*storedMessage, len(r.order))
	for _, id := range r.order {
		var h store.Header
		var role, state, visibility string
		var seqs []*int64
		err := results.QueryRow().Scan(&h.Sequence, &h.Revision, &role, &state, &visibility, &h.PartCount, &h.CreatedAt, &seqs)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return sess, nil, nil, err
		}
		h.Role, h.State, h.Visibility = synccore.Role(role), synccore.MessageState(state), synccore.Visibility(visibility)
		ids := r.partIDs[id]
		sm := &storedMessage{header: h, parts: make(map[string]int64, len(ids))}
		for j, seq := range seqs {
			if seq != nil && j < len(ids) {
				sm.parts[ids[j]] = *seq
			}
		}
		stored[id] = sm
	}
	for _, id := range r.closing {
		texts, err := scanStoredTexts(results)
		if err != nil {
			return sess, nil, nil, err
		}
		if sm := stored[id]; sm != nil {
			sm.texts = texts
		}
	}
	return sess, stored, checkErr, nil
}

// queueMessage checks one message against the stored state (and what the
// batch wrote before it) and queues its writes, advancing sess for a new
// message and stored for the messages after it.
func queueMessage(batch *pgx.Batch, sess *sessionRow, sessionID string, m *synccore.Message, stored map[string]*storedMessage, now int64) error {
	if err := store.ValidateHeader(sessionID, m); err != nil {
		return err
	}
	old, found := stored[m.MessageID]
	if !found {
		if err := store.CheckNew(m, sess.head); err != nil {
			return err
		}
		if m.CreatedAt == 0 {
			m.CreatedAt = now
		}
		old = &storedMessage{parts: map[string]int64{}}
	} else {
		if err := old.header.CheckUpdate(m); err != nil {
			return err
		}
		m.CreatedAt = old.header.CreatedAt
	}
	sess.moved = sess.moved || store.Moves(m, old.header, found)
	count, err := store.CheckParts(m, old.header.PartCount, found, func(partID string) (int64, error) {
		return old.parts[partID], nil
	})
	if err != nil {
		return err
	}
	if !found {
		// The header goes first: parts reference it (foreign key).
		batch.Queue(`INSERT INTO messages (sid, sequence, message_id, revision, role, state, turn_id,
				visibility, created_at, part_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			sess.sid, m.Sequence, m.MessageID, m.Revision, string(m.Role), string(m.State), m.TurnID,
			string(m.Visibility), m.CreatedAt, count)
		sess.head = m.Sequence
	} else {
		batch.Queue(`UPDATE messages SET revision = $1, state = $2, turn_id = $3, part_count = $4
			WHERE sid = $5 AND sequence = $6`,
			m.Revision, string(m.State), m.TurnID, count, sess.sid, old.header.Sequence)
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		body, err := wire.AppendPart(nil, p)
		if err != nil {
			return synccore.Errorf(synccore.CodeInvalidPart, "part %q does not encode: %v", p.PartID, err)
		}
		batch.Queue(`INSERT INTO parts (sid, msg_sequence, sequence, part_id, body) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (sid, msg_sequence, sequence) DO UPDATE SET body = excluded.body`,
			sess.sid, m.Sequence, p.Sequence, p.PartID, body)
		old.parts[p.PartID] = p.Sequence
		if old.texts == nil {
			old.texts = map[int64]synccore.Part{}
		}
		old.texts[p.Sequence] = synccore.Part{Sequence: p.Sequence, Type: p.Type, Text: p.Text}
	}
	if store.Indexed(m) && !(found && old.header.Done()) {
		queueIndex(batch, sess.sid, m.Sequence, old.texts)
	}
	// A later message of the batch with the same id is checked against
	// this one, as it would be had this one been written already.
	old.header = store.Header{Sequence: m.Sequence, Revision: m.Revision, Role: m.Role, State: m.State,
		Visibility: m.Visibility, CreatedAt: m.CreatedAt, PartCount: count}
	stored[m.MessageID] = old
	return nil
}
