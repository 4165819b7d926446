// Package sqlite is the SQLite store.Store: the default, one file for one
// server process. It keeps agent sessions in SQLite: sessions, their ordered
// messages and the parts of each message (as msgpack blobs).
//
// One writer connection does every write transaction; a small LIFO pool of
// reader connections serves reads, each in one read transaction so a page
// is a stable snapshot. WAL lets readers and the writer run at the same time.
//
// It keeps the contract of store.Store (see package store) with the
// checks of store's rules.go in each write transaction; the one writer
// connection serialises commits, so the checks see the latest state.
//
// Part bodies are msgpack blobs of synccore.Part, written and read by
// synccore's reflection-free codec (codec.go). The schema lives in schema.go as numbered
// migrations.
package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/server/store"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// ReadConns is the size of the reader pool; zero is the default, 4.
	// A pool cannot be unbounded: a negative value is the default too.
	ReadConns int
	// Logger receives the store's logs; nil is slog.Default().
	Logger *slog.Logger
}

// Store is the SQLite store.Store. Its methods are safe for
// concurrent use.
type Store struct {
	log     *slog.Logger
	writer  *pool // one conn: holding it is holding the write lock
	readers *pool
	all     []*conn
	commits atomic.Int64
	queue   writeQueue // writes waiting for the writer (group.go)
	chains  chainCache

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// Open opens (creating the file and its directories if needed) the store at
// path and runs any pending schema migrations.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store: create directory: %w", err)
		}
	}
	s := &Store{
		log:     opts.Logger.With("component", "store"),
		writer:  newPool(1),
		readers: newPool(opts.ReadConns),
		closed:  make(chan struct{}),
	}
	w, err := openConn(path, false)
	if err != nil {
		return nil, err
	}
	w.chains = &s.chains
	s.all = append(s.all, w)
	w.db.SetInterrupt(ctx) // a cancelled ctx stops a long migration
	err = migrate(ctx, w)
	w.db.SetInterrupt(context.Background())
	if err != nil {
		s.closeAll()
		return nil, ctxErr(ctx, err)
	}
	s.writer.put(w)
	for range opts.ReadConns {
		r, err := openConn(path, true)
		if err != nil {
			s.closeAll()
			return nil, err
		}
		r.chains = &s.chains
		s.all = append(s.all, r)
		s.readers.put(r)
	}
	s.log.Debug("store opened", "path", path, "read_conns", opts.ReadConns, "schema_version", len(migrations))
	return s, nil
}

// Close waits for the connections in use to come back, then closes them.
// Calls after Close fail with CodeClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		w := s.writer.drain()[0]
		// Keep the planner's statistics fresh for the next Open; cheap
		// when nothing changed.
		if err := w.db.Exec(`PRAGMA optimize`); err != nil {
			s.log.Warn("pragma optimize failed", "err", err)
		}
		s.readers.drain()
		s.closeErr = s.closeAll()
	})
	return s.closeErr
}

func (s *Store) closeAll() error {
	var errs []error
	for _, c := range s.all {
		if err := c.close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CommitCount returns how many writes were committed since Open, each
// atomically: in a transaction of its own, or in a savepoint of a group
// commit's (group.go).
func (s *Store) CommitCount() int64 { return s.commits.Load() }

// acquire takes a conn from p, honouring ctx and Close.
func (s *Store) acquire(ctx context.Context, p *pool) (*conn, error) {
	select {
	case <-s.closed:
		return nil, store.ErrClosed()
	default:
	}
	c, err := p.get(ctx, s.closed)
	if err != nil {
		return nil, err
	}
	// Close may have won the race while we waited: give the conn back.
	select {
	case <-s.closed:
		p.put(c)
		return nil, store.ErrClosed()
	default:
	}
	c.db.SetInterrupt(ctx)
	return c, nil
}

func (s *Store) release(p *pool, c *conn) {
	c.db.SetInterrupt(context.Background())
	p.put(c)
}

// read runs fn in one read transaction on a pooled reader connection, so
// everything fn reads comes from one snapshot.
func (s *Store) read(ctx context.Context, fn func(c *conn) error) error {
	c, err := s.acquire(ctx, s.readers)
	if err != nil {
		return err
	}
	defer s.release(s.readers, c)
	if err := c.db.Exec(`BEGIN`); err != nil {
		return ctxErr(ctx, fmt.Errorf("store: begin read: %w", err))
	}
	err = fn(c)
	// A read transaction has nothing to keep: ending it either way is fine.
	c.rollback()
	return ctxErr(ctx, err)
}

func (c *conn) rollback() {
	if !c.db.GetAutocommit() {
		// Clear a cancelled context first: the driver refuses every
		// statement, ROLLBACK included, while the interrupt is set.
		c.db.SetInterrupt(context.Background())
		c.db.Exec(`ROLLBACK`)
	}
}

func nowMillis() int64 { return time.Now().UnixMilli() }

// Ping checks that the store can read (store.Pinger): a reader connection
// runs a query on the database file. After Close it fails with CodeClosed.
func (s *Store) Ping(ctx context.Context) error {
	return s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT 1 FROM sqlite_schema LIMIT 1`)
		if err != nil {
			return err
		}
		st.Step()
		return done(st)
	})
}

var _ store.Pinger = (*Store)(nil)
