// Package postgres is the PostgreSQL store.Store: several server nodes on
// one database. It keeps the contract of store.Store (see package store):
// the code applies store's checks with typed errors, and the database
// enforces the sequence and revision rules as well (schema.go), so a node
// with a bug cannot break them either.
//
// A Commit is one READ COMMITTED transaction that first locks its session's
// row, so commits to one session are serialised across nodes and see the
// latest head; every read is one REPEATABLE READ, READ ONLY transaction, so
// a page comes from one snapshot. Part bodies are msgpack blobs of
// synccore.Part (bytea), the bytes the SQLite store writes.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// MaxConns bounds the connection pool; default 8 (pgxpool's default is
	// the number of CPUs, too few for a node's readers and writers). Zero
	// is the default; a pool cannot be unbounded, so a negative value is
	// the default too.
	MaxConns int32
	Logger   *slog.Logger
}

// Store is the PostgreSQL store.Store. Its methods are safe for concurrent
// use.
type Store struct {
	log     *slog.Logger
	pool    *pgxpool.Pool
	commits atomic.Int64
	queue   commitQueue // commits waiting for a group (group.go)
	// groupRuns counts the transactions of groups of two or more commits.
	groupRuns atomic.Int64

	closeOnce sync.Once
	closed    atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string) and applies any pending schema migrations.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 8
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: parse url: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: connect: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: connect: %w", err)
	}
	err = migrate(ctx, conn.Conn())
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{log: opts.Logger.With("component", "store", "engine", "postgres"), pool: pool}
	s.log.Debug("store opened", "host", cfg.ConnConfig.Host, "database", cfg.ConnConfig.Database,
		"schema_version", len(migrations))
	return s, nil
}

// Close waits for the connections in use to come back, then closes them.
// Calls after Close fail with CodeClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.pool.Close()
	})
	return nil
}

// CommitCount returns how many writes were committed since Open, each
// atomically: in a transaction of its own, or in a savepoint of a group
// commit's (group.go).
func (s *Store) CommitCount() int64 { return s.commits.Load() }

var (
	writeTx = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	readTx  = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// write runs fn in one write transaction; an error from fn rolls back
// everything fn wrote.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := s.inTx(ctx, writeTx, fn); err != nil {
		return err
	}
	s.commits.Add(1)
	return nil
}

// read runs fn in one read-only transaction: everything fn reads comes from
// one snapshot.
func (s *Store) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.inTx(ctx, readTx, fn)
}

func (s *Store) inTx(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed()
	}
	return s.typed(ctx, pgx.BeginTxFunc(ctx, s.pool, opts, fn))
}

// typed turns the database's refusals into the contract's typed errors:
// a rule the schema enforces is CodeConflict, an id already taken too; a
// cancelled context is the context's error; any failure after Close is
// CodeClosed.
func (s *Store) typed(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if s.closed.Load() {
		return store.ErrClosed()
	}
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23514", "23505": // check_violation, unique_violation
			conflict := synccore.Errorf(synccore.CodeConflict, "the database refused the write: %s", pe.Message)
			if strings.HasSuffix(pe.Message, ": fenced") { // check_fence in schema.go
				return fmt.Errorf("%w: %w", store.ErrLeaseLost, conflict)
			}
			return conflict
		}
	}
	return err
}

func nowMillis() int64 { return time.Now().UnixMilli() }

// Ping checks that the database answers (store.Pinger): one round trip on
// a pooled connection. After Close it fails with CodeClosed.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return store.ErrClosed()
	}
	return s.typed(ctx, s.pool.Ping(ctx))
}

var _ store.Pinger = (*Store)(nil)
