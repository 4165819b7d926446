// Package cache keeps the Go host's local cache and outbox
// (bindings.Cache, docs/protocol.md §6.9) in a SQLite file, through
// github.com/ncruces/go-sqlite3. It is its own package so that a host that
// does not cache does not link SQLite.
package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/synccore"
	"github.com/ncruces/go-sqlite3"
	"github.com/vmihailenco/msgpack/v5"
)

// DefaultMaxSessions is how many windows a File keeps (the most recently
// written ones), as the JS host's DEFAULT_MAX_SESSIONS.
const DefaultMaxSessions = 50

const schema = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE IF NOT EXISTS windows (
	principal TEXT NOT NULL, session_id TEXT NOT NULL, internal INTEGER NOT NULL,
	meta BLOB NOT NULL, touched INTEGER NOT NULL,
	PRIMARY KEY (principal, session_id, internal));
CREATE TABLE IF NOT EXISTS messages (
	principal TEXT NOT NULL, session_id TEXT NOT NULL, internal INTEGER NOT NULL,
	sequence INTEGER NOT NULL, message BLOB NOT NULL,
	PRIMARY KEY (principal, session_id, internal, sequence));
CREATE TABLE IF NOT EXISTS outbox (
	principal TEXT NOT NULL, session_id TEXT NOT NULL, id TEXT NOT NULL,
	ord INTEGER NOT NULL, entry BLOB NOT NULL,
	PRIMARY KEY (principal, session_id, id));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`

// File is a bindings.Cache in one SQLite file. Its methods are safe for
// concurrent use (one connection, one call at a time).
type File struct {
	// MaxSessions bounds the windows kept (0: DefaultMaxSessions): past
	// it, the least recently written go.
	MaxSessions int

	mu sync.Mutex
	db *sqlite3.Conn
}

var _ bindings.Cache = (*File)(nil)

// Open opens (or creates) the cache file at path.
func Open(path string) (*File, error) {
	db, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READWRITE|sqlite3.OPEN_CREATE)
	if err != nil {
		return nil, fmt.Errorf("cache: open %s: %w", path, err)
	}
	if err := db.BusyTimeout(5 * time.Second); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache: busy_timeout: %w", err)
	}
	if err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache: schema: %w", err)
	}
	return &File{db: db}, nil
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return nil
	}
	err := f.db.Close()
	f.db = nil
	return err
}

var errClosed = errors.New("cache: closed")

// run runs fn on the connection, under the lock, interrupted when ctx ends.
func (f *File) run(ctx context.Context, fn func(db *sqlite3.Conn) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	old := f.db.SetInterrupt(ctx)
	defer f.db.SetInterrupt(old)
	return fn(f.db)
}

// exec runs one statement with args bound in order, calling row for each
// row it returns (row may be nil).
func exec(db *sqlite3.Conn, query string, row func(st *sqlite3.Stmt) error, args ...any) error {
	st, _, err := db.Prepare(query)
	if err != nil {
		return fmt.Errorf("cache: prepare %q: %w", query, err)
	}
	defer st.Close()
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			err = st.BindInt64(i+1, v)
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
			return fmt.Errorf("cache: bind %d of %q: %w", i+1, query, err)
		}
	}
	for st.Step() {
		if row != nil {
			if err := row(st); err != nil {
				return err
			}
		}
	}
	if err := st.Err(); err != nil {
		return fmt.Errorf("cache: %q: %w", query, err)
	}
	return nil
}

// tx runs fn in one transaction.
func tx(db *sqlite3.Conn, fn func() error) (err error) {
	if err := db.Exec("BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("cache: begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = db.Exec("ROLLBACK")
			return
		}
		if cerr := db.Exec("COMMIT"); cerr != nil {
			_ = db.Exec("ROLLBACK")
			err = fmt.Errorf("cache: commit: %w", cerr)
		}
	}()
	return fn()
}

func blob(st *sqlite3.Stmt, col int) []byte { return st.ColumnRawBlob(col) }

// LoadWindow implements bindings.Cache.
func (f *File) LoadWindow(ctx context.Context, key bindings.CacheKey) (bindings.CachedWindow, bool, error) {
	var w bindings.CachedWindow
	found := false
	err := f.run(ctx, func(db *sqlite3.Conn) error {
		args := []any{key.Principal, key.SessionID, key.IncludeInternal}
		err := exec(db, `SELECT meta FROM windows WHERE principal = ? AND session_id = ? AND internal = ?`, func(st *sqlite3.Stmt) error {
			found = true
			return msgpack.Unmarshal(blob(st, 0), &w.Meta)
		}, args...)
		if err != nil || !found {
			return err
		}
		return exec(db, `SELECT message FROM messages WHERE principal = ? AND session_id = ? AND internal = ? ORDER BY sequence`, func(st *sqlite3.Stmt) error {
			var m synccore.Message
			if err := msgpack.Unmarshal(blob(st, 0), &m); err != nil {
				return fmt.Errorf("cache: a kept message: %w", err)
			}
			w.Messages = append(w.Messages, m)
			return nil
		}, args...)
	})
	return w, found && err == nil, err
}

// WriteWindow implements bindings.Cache.
func (f *File) WriteWindow(ctx context.Context, key bindings.CacheKey, meta bindings.WindowMeta, put []synccore.Message, keepFrom int64) error {
	mb, err := msgpack.Marshal(meta)
	if err != nil {
		return err
	}
	rows := make([][]byte, len(put))
	for i := range put {
		if rows[i], err = msgpack.Marshal(&put[i]); err != nil {
			return err
		}
	}
	max := f.MaxSessions
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return f.run(ctx, func(db *sqlite3.Conn) error {
		return tx(db, func() error {
			k := []any{key.Principal, key.SessionID, key.IncludeInternal}
			if err := exec(db, `INSERT INTO windows (principal, session_id, internal, meta, touched) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT DO UPDATE SET meta = excluded.meta, touched = excluded.touched`, nil,
				append(k, mb, time.Now().UnixNano())...); err != nil {
				return err
			}
			for i := range put {
				if err := exec(db, `INSERT OR REPLACE INTO messages (principal, session_id, internal, sequence, message) VALUES (?, ?, ?, ?, ?)`, nil,
					append(k, put[i].Sequence, rows[i])...); err != nil {
					return err
				}
			}
			if keepFrom > 0 {
				if err := exec(db, `DELETE FROM messages WHERE principal = ? AND session_id = ? AND internal = ? AND sequence < ?`, nil,
					append(k, keepFrom)...); err != nil {
					return err
				}
			}
			// The size bound: the least recently written windows go.
			if err := exec(db, `DELETE FROM messages WHERE (principal, session_id, internal) IN
				(SELECT principal, session_id, internal FROM windows ORDER BY touched DESC LIMIT -1 OFFSET ?)`, nil, int64(max)); err != nil {
				return err
			}
			return exec(db, `DELETE FROM windows WHERE (principal, session_id, internal) IN
				(SELECT principal, session_id, internal FROM windows ORDER BY touched DESC LIMIT -1 OFFSET ?)`, nil, int64(max))
		})
	})
}

// DeleteWindow implements bindings.Cache.
func (f *File) DeleteWindow(ctx context.Context, key bindings.CacheKey) error {
	return f.run(ctx, func(db *sqlite3.Conn) error {
		return tx(db, func() error {
			k := []any{key.Principal, key.SessionID, key.IncludeInternal}
			if err := exec(db, `DELETE FROM messages WHERE principal = ? AND session_id = ? AND internal = ?`, nil, k...); err != nil {
				return err
			}
			return exec(db, `DELETE FROM windows WHERE principal = ? AND session_id = ? AND internal = ?`, nil, k...)
		})
	})
}

// Outbox implements bindings.Cache.
func (f *File) Outbox(ctx context.Context, principal, sessionID string) ([]bindings.OutboxEntry, error) {
	var out []bindings.OutboxEntry
	err := f.run(ctx, func(db *sqlite3.Conn) error {
		return exec(db, `SELECT entry FROM outbox WHERE principal = ? AND session_id = ? ORDER BY ord, id`, func(st *sqlite3.Stmt) error {
			var e bindings.OutboxEntry
			if err := msgpack.Unmarshal(blob(st, 0), &e); err != nil {
				return fmt.Errorf("cache: an outbox entry: %w", err)
			}
			out = append(out, e)
			return nil
		}, principal, sessionID)
	})
	return out, err
}

// PutOutbox implements bindings.Cache.
func (f *File) PutOutbox(ctx context.Context, principal, sessionID string, e bindings.OutboxEntry) error {
	b, err := msgpack.Marshal(&e)
	if err != nil {
		return err
	}
	return f.run(ctx, func(db *sqlite3.Conn) error {
		return exec(db, `INSERT OR REPLACE INTO outbox (principal, session_id, id, ord, entry) VALUES (?, ?, ?, ?, ?)`, nil,
			principal, sessionID, e.ID, e.Order, b)
	})
}

// DeleteOutbox implements bindings.Cache.
func (f *File) DeleteOutbox(ctx context.Context, principal, sessionID, id string) error {
	return f.run(ctx, func(db *sqlite3.Conn) error {
		return exec(db, `DELETE FROM outbox WHERE principal = ? AND session_id = ? AND id = ?`, nil, principal, sessionID, id)
	})
}

// Principal implements bindings.Cache.
func (f *File) Principal(ctx context.Context) (string, error) {
	var p string
	err := f.run(ctx, func(db *sqlite3.Conn) error {
		return exec(db, `SELECT value FROM meta WHERE name = 'principal'`, func(st *sqlite3.Stmt) error {
			p = st.ColumnText(0)
			return nil
		})
	})
	return p, err
}

// SetPrincipal implements bindings.Cache.
func (f *File) SetPrincipal(ctx context.Context, principal string) error {
	return f.run(ctx, func(db *sqlite3.Conn) error {
		return exec(db, `INSERT OR REPLACE INTO meta (name, value) VALUES ('principal', ?)`, nil, principal)
	})
}

// Clear implements bindings.Cache.
func (f *File) Clear(ctx context.Context, principal string) error {
	return f.run(ctx, func(db *sqlite3.Conn) error {
		return tx(db, func() error {
			for _, table := range []string{"messages", "windows", "outbox"} {
				q, args := `DELETE FROM `+table, []any(nil)
				if principal != "" {
					q, args = q+` WHERE principal = ?`, []any{principal}
				}
				if err := exec(db, q, nil, args...); err != nil {
					return err
				}
			}
			if principal == "" {
				return exec(db, `DELETE FROM meta`, nil)
			}
			return nil
		})
	})
}
