package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/agentsync/agentsync/server/store"
)

// group.go: group commit. Every write runs on the one writer connection;
// writes that arrive while it is busy (the checkpoints of other sessions
// streaming at once) wait, and whoever gets the connection next runs every
// write queued by then in one transaction, each write in a savepoint of
// its own. A group pays one BEGIN and one COMMIT (one WAL append and,
// at a checkpoint, one sync) for all its writes.
//
// What each write's caller sees is what it saw alone: its write is
// atomic (an error from it, or one it returns, rolls back its savepoint
// only); writes apply in arrival order, each seeing the ones before it;
// and the call returns only once the group's COMMIT did, so the promise
// of synchronous=NORMAL (docs/storage.md) holds for every write as
// before. A write whose context ended before its turn came is not run.
// A lone write runs as before, in a transaction of its own that its
// context can interrupt; in a group, a running write is not interrupted
// (an interrupt would roll back the whole transaction, the other writes'
// too).

// writeReq is one write waiting for the writer.
type writeReq struct {
	ctx   context.Context
	fn    func(c *conn) error
	taken bool // a holder of the writer has taken it (under writeQueue.mu)
	err   error
	done  chan struct{} // closed once the write's group committed or failed
}

// writeQueue holds the writes waiting for the writer connection.
type writeQueue struct {
	mu      sync.Mutex
	pending []*writeReq
}

// write runs fn in a write transaction on the writer connection, grouped
// with the writes queued at the same time. An error from fn rolls back
// everything fn wrote, and only that.
func (s *Store) write(ctx context.Context, fn func(c *conn) error) error {
	q := &s.queue
	// The writer free and nobody waiting: a lone write, which costs
	// nothing more than it did before groups.
	if c, ok := s.writer.tryGet(); ok {
		q.mu.Lock()
		alone := len(q.pending) == 0
		q.mu.Unlock()
		if alone {
			select {
			case <-s.closed:
				s.writer.put(c)
				return store.ErrClosed()
			default:
			}
			c.db.SetInterrupt(ctx)
			err := s.writeAlone(ctx, c, fn)
			s.release(s.writer, c)
			return err
		}
		s.writer.put(c) // writes wait: join them
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	q.mu.Lock()
	q.pending = append(q.pending, r)
	q.mu.Unlock()

	c, err := s.acquire(ctx, s.writer)
	if err != nil {
		q.mu.Lock()
		if !r.taken {
			q.pending = slices.DeleteFunc(q.pending, func(p *writeReq) bool { return p == r })
			q.mu.Unlock()
			return err
		}
		q.mu.Unlock()
		<-r.done // another holder runs it: its outcome is the answer
		return r.err
	}
	q.mu.Lock()
	if r.taken { // the holder before us ran it
		q.mu.Unlock()
		s.release(s.writer, c)
		<-r.done
		return r.err
	}
	group := q.pending
	q.pending = nil
	for _, p := range group {
		p.taken = true
	}
	q.mu.Unlock()

	if len(group) == 1 {
		r.err = s.writeAlone(ctx, c, fn)
	} else {
		s.writeGroup(c, group)
	}
	s.release(s.writer, c)
	for _, p := range group {
		close(p.done)
	}
	return r.err
}

// writeAlone runs one write in a transaction of its own, which ctx can
// interrupt.
func (s *Store) writeAlone(ctx context.Context, c *conn, fn func(c *conn) error) error {
	if err := c.db.Exec(`BEGIN IMMEDIATE`); err != nil {
		return ctxErr(ctx, fmt.Errorf("store: begin: %w", err))
	}
	if err := fn(c); err != nil {
		c.rollback()
		return ctxErr(ctx, err)
	}
	if err := c.db.Exec(`COMMIT`); err != nil {
		c.rollback()
		return ctxErr(ctx, fmt.Errorf("store: commit: %w", err))
	}
	s.commits.Add(1)
	return nil
}

// writeGroup runs the writes of group in one transaction, each in a
// savepoint, and sets each one's err.
func (s *Store) writeGroup(c *conn, group []*writeReq) {
	c.db.SetInterrupt(context.Background())
	var applied []*writeReq // written in the open transaction
	open := false
	for _, r := range group {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		if !open {
			if err := c.db.Exec(`BEGIN IMMEDIATE`); err != nil {
				r.err = fmt.Errorf("store: begin: %w", err)
				continue
			}
			open = true
		}
		if r.err = c.db.Exec(`SAVEPOINT w`); r.err == nil {
			if r.err = r.fn(c); r.err == nil {
				r.err = c.db.Exec(`RELEASE w`)
			}
		}
		switch {
		case r.err == nil:
			applied = append(applied, r)
		case c.db.GetAutocommit():
			// SQLite ended the whole transaction (a full disk, an I/O
			// error): the writes before this one are gone with it.
			for _, a := range applied {
				a.err = fmt.Errorf("store: commit: rolled back with another write of its group: %w", r.err)
			}
			applied, open = applied[:0], false
		default:
			_ = c.db.Exec(`ROLLBACK TO w`)
			_ = c.db.Exec(`RELEASE w`)
		}
	}
	if !open {
		return
	}
	if err := c.db.Exec(`COMMIT`); err != nil {
		c.rollback()
		for _, a := range applied {
			a.err = fmt.Errorf("store: commit: %w", err)
		}
		return
	}
	s.commits.Add(int64(len(applied)))
}
