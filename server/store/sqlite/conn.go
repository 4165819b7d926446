package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// busyTimeout bounds how long a connection waits for a lock. Set explicitly:
// the driver's default is 0 (fail at once), and readers in WAL mode only wait
// on the rare checkpoint/recovery lock.
const busyTimeout = 5 * time.Second

// conn is one SQLite connection with its prepared statements. A conn is
// used by one goroutine at a time (the Store hands it out through the
// writer slot or the reader pool), as go-sqlite3 requires.
type conn struct {
	db    *sqlite3.Conn
	stmts map[string]*sqlite3.Stmt
	codec *partCodec
	// chains caches the ancestors of forks (fork.go), shared by the
	// store's connections.
	chains *chainCache
}

// openConn opens path and applies the per-connection pragmas.
func openConn(path string, reader bool) (*conn, error) {
	// No OPEN_URI: the path is a plain file name, never parsed as a URI.
	db, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := db.BusyTimeout(busyTimeout); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: busy_timeout: %w", err)
	}
	// FTS5 is an extension of this build: each connection registers it
	// (search.go).
	if err := fts5.Register(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: fts5: %w", err)
	}
	// The query planner's stability guarantee: a plan never depends on the
	// values bound. Without it, a statement planned with sqlite_stat4 and
	// bound values is prepared again each time a value changes: a page
	// along a fork's path binds a new session per segment, and spent most
	// of its time re-preparing.
	if _, err := db.Config(sqlite3.DBCONFIG_ENABLE_QPSG, true); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: enable QPSG: %w", err)
	}
	// mmap lets every connection read database pages straight from the OS
	// page cache instead of one pread per cache miss (random page reads over
	// a long history were ~25% faster); each connection's own cache is small.
	pragmas := `PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192;
		PRAGMA mmap_size = 268435456;`
	if reader {
		pragmas += ` PRAGMA query_only = ON;`
	} else {
		// WAL is persistent in the file; setting it on the writer is enough
		// and lets readers see a stable snapshot while the writer commits.
		pragmas = `PRAGMA journal_mode = WAL; ` + pragmas
	}
	if err := db.Exec(pragmas); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: pragmas: %w", err)
	}
	return &conn{db: db, stmts: make(map[string]*sqlite3.Stmt), codec: newPartCodec()}, nil
}

// prep returns the cached prepared statement for query, reset and with its
// bindings cleared.
func (c *conn) prep(query string) (*sqlite3.Stmt, error) {
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, _, err := c.db.PrepareFlags(query, sqlite3.PREPARE_PERSISTENT)
	if err != nil {
		return nil, fmt.Errorf("store: prepare %q: %w", query, err)
	}
	c.stmts[query] = st
	return st, nil
}

// exec runs a statement that returns no rows, binding args in order.
func (c *conn) exec(query string, args ...any) error {
	st, err := c.prep(query)
	if err != nil {
		return err
	}
	if err := bind(st, args...); err != nil {
		return err
	}
	if err := st.Exec(); err != nil {
		return fmt.Errorf("store: exec %q: %w", query, err)
	}
	return nil
}

// query binds args and steps st; the caller reads rows with st.Step and must
// call done(st) when finished.
func (c *conn) query(query string, args ...any) (*sqlite3.Stmt, error) {
	st, err := c.prep(query)
	if err != nil {
		return nil, err
	}
	if err := bind(st, args...); err != nil {
		return nil, err
	}
	return st, nil
}

// done resets st and returns the error its stepping met, if any.
func done(st *sqlite3.Stmt) error {
	if err := st.Reset(); err != nil {
		return fmt.Errorf("store: query %q: %w", st.SQL(), err)
	}
	return nil
}

func bind(st *sqlite3.Stmt, args ...any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case int64:
			err = st.BindInt64(i+1, v)
		case int:
			err = st.BindInt64(i+1, int64(v))
		case string:
			err = st.BindText(i+1, v)
		case []byte:
			err = st.BindBlob(i+1, v)
		case bool:
			err = st.BindBool(i+1, v)
		default:
			err = fmt.Errorf("unsupported type %T", a)
		}
		if err != nil {
			return fmt.Errorf("store: bind %d of %q: %w", i+1, st.SQL(), err)
		}
	}
	return nil
}

func (c *conn) close() error {
	for _, st := range c.stmts {
		st.Close()
	}
	c.stmts = nil
	return c.db.Close()
}

// ctxErr turns an interrupted statement into the context's error, so callers
// see context.Canceled / DeadlineExceeded rather than SQLite's INTERRUPT.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, sqlite3.INTERRUPT) {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}
