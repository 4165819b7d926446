package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// group.go: group commit. At most groupRunners commits (or groups of
// them) run at once; the commits that arrive meanwhile (the checkpoints
// of other sessions streaming at once) queue, and when a runner is free
// the first of them runs every commit queued by then, one per session,
// in one transaction with the statements of all of them pipelined: one
// round trip locks every session and reads what the checks need, a
// second writes every commit, each in a savepoint of its own, and
// commits. A group pays two round trips and one COMMIT for all its
// commits, where each paid two and a COMMIT alone.
//
// What each caller sees is what it saw alone:
//   - atomic: a commit the checks refuse writes nothing, and one the
//     database refuses (a trigger's rule, a key, the lease fence) rolls
//     back its savepoint only; the group goes on without it;
//   - in order: a session has at most one commit in flight on this
//     Store, so the commits of one session apply in arrival order, each
//     seeing the ones before it;
//   - durable: a call returns only once the group's COMMIT did, so a
//     commit acknowledged is committed, with the durability the server's
//     synchronous_commit gives any transaction;
//   - fenced: each commit's statements run at its own lease epoch
//     (set_config in its savepoint), so the triggers judge it as before.
//
// A group locks its sessions with NOWAIT: a group never waits for a lock
// another transaction (another node's) holds, so it is never part of a
// deadlock and never held up by one session. If any lock or read of the
// first round trip fails, the group's transaction is rolled back and its
// commits run one by one, each alone, as they did before groups. A commit
// whose context ended before its group ran is not run; a running group is
// not interrupted (cancelling a statement would roll back every commit of
// the group).

// groupRunners bounds the commits and groups running at once: with one,
// every commit that arrives while a group runs joins the next group.
const groupRunners = 1

// maxGroup bounds a group: PostgreSQL keeps up to 64 subtransactions of
// a transaction in shared memory, beyond which snapshots get slower.
const maxGroup = 32

// commitReq is one commit waiting for, or in, a group.
type commitReq struct {
	ctx       context.Context
	sessionID string
	fence     *store.Lease
	msgs      []synccore.Message

	group []*commitReq // set for the group's leader, who runs it
	taken bool         // in a group (under commitQueue.mu)
	err   error
	wake  chan struct{} // closed when r leads a group, or its commit is done
}

// commitQueue holds the commits waiting for a runner.
type commitQueue struct {
	mu       sync.Mutex
	pending  []*commitReq
	running  int
	inflight map[string]int // sessions with a commit in a running group
}

// commit writes one checkpoint (Commit, CommitLeased) through the queue.
func (s *Store) commit(ctx context.Context, sessionID string, fence *store.Lease, msgs []synccore.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if s.closed.Load() {
		return store.ErrClosed()
	}
	r := &commitReq{ctx: ctx, sessionID: sessionID, fence: fence, msgs: msgs, wake: make(chan struct{})}
	q := &s.queue
	q.mu.Lock()
	q.pending = append(q.pending, r)
	leaders := q.dispatchLocked()
	q.mu.Unlock()
	wakeAll(leaders)

	select {
	case <-r.wake:
	case <-ctx.Done():
		q.mu.Lock()
		if !r.taken {
			q.pending = slices.DeleteFunc(q.pending, func(p *commitReq) bool { return p == r })
			q.mu.Unlock()
			return s.typed(ctx, ctx.Err())
		}
		q.mu.Unlock()
		<-r.wake
	}
	if r.group != nil {
		s.runGroup(r.group)
		q.mu.Lock()
		q.running--
		for _, p := range r.group {
			if q.inflight[p.sessionID]--; q.inflight[p.sessionID] == 0 {
				delete(q.inflight, p.sessionID)
			}
		}
		leaders := q.dispatchLocked()
		q.mu.Unlock()
		for _, p := range r.group {
			if p != r {
				close(p.wake)
			}
		}
		wakeAll(leaders)
	}
	return r.err
}

func wakeAll(leaders []*commitReq) {
	for _, l := range leaders {
		close(l.wake)
	}
}

// dispatchLocked forms groups of the pending commits while runners are
// free and returns their leaders, to wake. A group takes the pending
// commits in order, at most one per session and none of a session in
// flight (nor any after a commit it skipped, so that a session's commits
// keep their order).
func (q *commitQueue) dispatchLocked() []*commitReq {
	var leaders []*commitReq
	for q.running < groupRunners && len(q.pending) > 0 {
		var group []*commitReq
		skip := map[string]bool{}
		rest := q.pending[:0:0]
		for _, p := range q.pending {
			if len(group) == maxGroup || skip[p.sessionID] || q.inflight[p.sessionID] > 0 {
				skip[p.sessionID] = true
				rest = append(rest, p)
				continue
			}
			skip[p.sessionID] = true
			group = append(group, p)
		}
		if len(group) == 0 {
			break
		}
		q.pending = rest
		if q.inflight == nil {
			q.inflight = map[string]int{}
		}
		for _, p := range group {
			p.taken = true
			q.inflight[p.sessionID]++
		}
		group[0].group = group
		q.running++
		leaders = append(leaders, group[0])
	}
	return leaders
}

// runGroup runs the commits of group and sets each one's err.
func (s *Store) runGroup(group []*commitReq) {
	if len(group) == 1 {
		r := group[0]
		if err := r.ctx.Err(); err != nil {
			r.err = s.typed(r.ctx, err)
			return
		}
		r.err = s.commitAlone(r.ctx, r.sessionID, r.fence, r.msgs)
		return
	}
	var live []*commitReq
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err = s.typed(r.ctx, err)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	if s.closed.Load() {
		for _, r := range live {
			r.err = store.ErrClosed()
		}
		return
	}
	ctx := context.WithoutCancel(live[0].ctx)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		for _, r := range live {
			r.err = s.typed(r.ctx, err)
		}
		return
	}
	for len(live) > 0 {
		var again []*commitReq
		again, err = s.groupIn(ctx, conn, live)
		s.groupRuns.Add(1)
		if conn.Conn().PgConn().TxStatus() != 'I' {
			_, _ = conn.Exec(ctx, "ROLLBACK")
		}
		if err != nil {
			break
		}
		live = again
	}
	conn.Release()
	if err == nil {
		return
	}
	// The first round trip failed (a session locked elsewhere, the
	// connection): nothing was written; each commit runs alone, in order.
	for _, r := range live {
		if err := r.ctx.Err(); err != nil {
			r.err = s.typed(r.ctx, err)
			continue
		}
		r.err = s.commitAlone(r.ctx, r.sessionID, r.fence, r.msgs)
	}
}

// groupWrite is one commit of a running group.
type groupWrite struct {
	r     *commitReq
	reads commitReads
	epoch string // the lease epoch it writes at
}

// lockSessionNowaitSQL is lockSessionSQL for a group: a session another
// transaction holds fails at once (lock_not_available) instead of
// waiting.
const lockSessionNowaitSQL = lockSessionSQL + ` NOWAIT`

// groupIn runs live, two or more commits to distinct sessions, in one
// transaction on conn and sets each one's err. If the database refused
// one commit's statement, the transaction is lost: that commit fails
// with the refusal, and again are the others, to run in a new
// transaction (nothing of them was written). An error means that the
// first round trip (locks and reads) failed and nothing was written.
func (s *Store) groupIn(ctx context.Context, conn *pgxpool.Conn, live []*commitReq) (again []*commitReq, err error) {
	// Round trip 1: begin, lock every session, read what the checks need.
	ws := make([]*groupWrite, len(live))
	var b pgx.Batch
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED`)
	for i, r := range live {
		ws[i] = &groupWrite{r: r, epoch: "0"}
		if r.fence != nil {
			ws[i].epoch = strconv.FormatInt(r.fence.Epoch, 10)
		}
		ws[i].reads = queueReads(&b, r.sessionID, r.fence, r.msgs, lockSessionNowaitSQL)
	}
	results := conn.SendBatch(ctx, &b)
	if _, err := results.Exec(); err != nil {
		results.Close()
		return nil, err
	}
	sessions := make([]sessionRow, len(ws))
	stored := make([]map[string]*storedMessage, len(ws))
	for i, w := range ws {
		sess, st, checkErr, err := w.reads.scan(results)
		if err != nil {
			results.Close()
			return nil, err
		}
		w.r.err = checkErr
		sessions[i], stored[i] = sess, st
	}
	if err := results.Close(); err != nil {
		return nil, err
	}

	// The checks, and the writes of every commit they pass. Each lock
	// declared its commit's lease epoch; the last one holds now, and a
	// commit at another epoch declares its own first.
	now := nowMillis()
	cur := ws[len(ws)-1].epoch
	b = pgx.Batch{}
	var writes []*groupWrite
	var ends []int           // the index in b after each write's statements
	var touched []sessionRow // the sessions written
	for i, w := range ws {
		if w.r.err != nil {
			continue
		}
		n := len(b.QueuedQueries)
		if w.epoch != cur {
			b.Queue(`SELECT set_config('agentsync.lease_epoch', $1, true)`, w.epoch)
		}
		if err := queueWrites(&b, &sessions[i], w.r.sessionID, w.r.msgs, stored[i], now); err != nil {
			w.r.err = err
			b.QueuedQueries = b.QueuedQueries[:n]
			continue
		}
		cur = w.epoch
		writes = append(writes, w)
		ends = append(ends, len(b.QueuedQueries))
		touched = append(touched, sessions[i])
	}
	if len(touched) > 0 {
		// One statement for the group: a failure here is the group's, as
		// the COMMIT's is.
		queueTouch(&b, now, touched)
	}
	b.Queue(`COMMIT`)

	// Round trip 2: every commit's writes, then COMMIT. A statement the
	// database refuses aborts the transaction, and the server skips the
	// rest of the pipeline.
	results = conn.SendBatch(ctx, &b)
	failed, k := -1, 0
	for j := range b.QueuedQueries {
		if _, err = results.Exec(); err != nil {
			failed = j
			break
		}
	}
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	for k < len(ends) && failed >= ends[k] {
		k++
	}
	switch {
	case err == nil:
		for _, w := range writes {
			w.r.err = nil
		}
		s.commits.Add(int64(len(writes)))
	case failed >= 0 && k < len(writes) && refusal(err):
		// One commit's statement was refused: it fails alone, and the
		// others run again.
		writes[k].r.err = s.typed(writes[k].r.ctx, err)
		for i, w := range writes {
			if i != k {
				again = append(again, w.r)
			}
		}
	default:
		// The COMMIT failed, or the connection: every commit of the
		// group fails (none was written).
		for _, w := range writes {
			w.r.err = s.typed(w.r.ctx, fmt.Errorf("store: group commit: %w", err))
		}
	}
	return again, nil
}

// refusal reports whether err is the database refusing one statement (a
// rule, a key), after which ROLLBACK TO SAVEPOINT recovers the
// transaction, rather than the connection failing.
func refusal(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}
