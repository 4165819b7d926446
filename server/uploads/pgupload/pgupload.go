// Package pgupload keeps tus uploads in progress in PostgreSQL (an
// uploads.Store), so that every node of a cluster serves every request of
// every upload: a client whose PATCH after a cut reaches another node
// (round-robin behind a load balancer, no sticky sessions) resumes there
// from the offset the database holds.
//
// An upload is a row of upload_infos (tusd's FileInfo as JSON, its offset
// and when it last grew) and its bytes rows of upload_chunks, each written
// with the offset's update in one transaction, so the offset never counts
// a byte that is not stored. An upload's requests are serialized across
// nodes by a PostgreSQL advisory lock held on a connection of its own for
// the request; a node that dies loses its connections and so its locks. A
// request waiting for the lock asks its holder to let go (tusd's
// requestUnlock): the holder sees the waiter in pg_locks, so a client
// that resumes on another node does not wait for its old, cut request.
package pgupload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentsync/agentsync/server/uploads"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	tusd "github.com/tus/tusd/v2/pkg/handler"
)

// ChunkSize bounds one row of an upload's bytes.
const ChunkSize = 1 << 20

// lockClass is the first key of the uploads' advisory locks (the second is
// hashtext of the upload id): it keeps them apart from other locks.
const lockClass = 74_311

// pollInterval is how often a lock's holder looks for a waiter.
const pollInterval = 200 * time.Millisecond

const schema = `
CREATE TABLE IF NOT EXISTS upload_infos (
	id         text PRIMARY KEY,
	info       jsonb NOT NULL,
	size       bigint NOT NULL CHECK (size >= 0),
	written    bigint NOT NULL DEFAULT 0 CHECK (written >= 0 AND written <= size),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS upload_chunks (
	id   text NOT NULL REFERENCES upload_infos (id) ON DELETE CASCADE,
	off  bigint NOT NULL CHECK (off >= 0),
	data bytea NOT NULL,
	PRIMARY KEY (id, off)
);
`

// Store is the PostgreSQL uploads.Store.
type Store struct {
	pool *pgxpool.Pool
}

var _ uploads.Store = (*Store)(nil)

// Open connects to the database at url (the nodes' store, or another)
// and creates the tables if needed. maxConns bounds the pool (zero or
// less: 8); each upload request being written holds one for its lock.
func Open(ctx context.Context, url string, maxConns int32) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgupload: parse url: %w", err)
	}
	if maxConns <= 0 {
		maxConns = 8
	}
	cfg.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgupload: connect: %w", err)
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgupload: create tables: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// NewUpload stores a new upload's info (tusd.DataStore).
func (s *Store) NewUpload(ctx context.Context, info tusd.FileInfo) (tusd.Upload, error) {
	if info.ID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		info.ID = hex.EncodeToString(b[:])
	}
	if info.SizeIsDeferred {
		return nil, errors.New("pgupload: an upload needs its length")
	}
	info.Offset = 0
	info.Storage = map[string]string{"Type": "pgupload"}
	data, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO upload_infos (id, info, size) VALUES ($1, $2, $3)`, info.ID, data, info.Size); err != nil {
		return nil, fmt.Errorf("pgupload: new upload: %w", err)
	}
	return &upload{s: s, id: info.ID}, nil
}

// GetUpload finds an upload; tusd.ErrNotFound if none (tusd.DataStore).
func (s *Store) GetUpload(ctx context.Context, id string) (tusd.Upload, error) {
	u := &upload{s: s, id: id}
	if _, err := u.GetInfo(ctx); err != nil {
		return nil, err
	}
	return u, nil
}

// AsTerminatableUpload (tusd.TerminaterDataStore).
func (s *Store) AsTerminatableUpload(up tusd.Upload) tusd.TerminatableUpload { return up.(*upload) }

// Stale lists the uploads that have not grown for olderThan, by the
// database's clock (uploads.Store).
func (s *Store) Stale(ctx context.Context, olderThan time.Duration) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM upload_infos WHERE updated_at < now() - make_interval(secs => $1) ORDER BY id`, olderThan.Seconds())
	if err != nil {
		return nil, fmt.Errorf("pgupload: stale uploads: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pgupload: stale uploads: %w", err)
	}
	return ids, nil
}

// upload is one upload's rows.
type upload struct {
	s  *Store
	id string
}

// GetInfo reads the upload's info, its offset the bytes stored.
func (u *upload) GetInfo(ctx context.Context) (tusd.FileInfo, error) {
	var info tusd.FileInfo
	var data []byte
	var written int64
	err := u.s.pool.QueryRow(ctx, `SELECT info, written FROM upload_infos WHERE id = $1`, u.id).Scan(&data, &written)
	if errors.Is(err, pgx.ErrNoRows) {
		return info, tusd.ErrNotFound
	}
	if err != nil {
		return info, fmt.Errorf("pgupload: read upload: %w", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("pgupload: upload info: %w", err)
	}
	info.Offset = written
	return info, nil
}

// WriteChunk stores src's bytes from offset, a row per ChunkSize, each
// with the offset's move in one transaction. Bytes read before src fails
// (a cut connection) are stored too, so the client resumes after them.
func (u *upload) WriteChunk(ctx context.Context, offset int64, src io.Reader) (int64, error) {
	buf := make([]byte, ChunkSize)
	var written int64
	for {
		n, rerr := io.ReadFull(src, buf)
		if n > 0 {
			// The request's context ends with a cut: what was read is
			// stored regardless.
			if err := u.append(context.WithoutCancel(ctx), offset+written, buf[:n]); err != nil {
				return written, err
			}
			written += int64(n)
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
			return written, nil
		default:
			return written, rerr
		}
	}
}

// append stores one row at off, if off is where the upload ends.
func (u *upload) append(ctx context.Context, off int64, data []byte) error {
	return pgx.BeginFunc(ctx, u.s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE upload_infos SET written = written + $3, updated_at = now()
			WHERE id = $1 AND written = $2 AND written + $3 <= size`, u.id, off, int64(len(data)))
		if err != nil {
			return fmt.Errorf("pgupload: write: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return tusd.ErrMismatchOffset
		}
		if _, err := tx.Exec(ctx, `INSERT INTO upload_chunks (id, off, data) VALUES ($1, $2, $3)`, u.id, off, data); err != nil {
			return fmt.Errorf("pgupload: write: %w", err)
		}
		return nil
	})
}

// GetReader reads the stored bytes in order, a row at a time.
func (u *upload) GetReader(ctx context.Context) (io.ReadCloser, error) {
	return &reader{ctx: ctx, u: u}, nil
}

// FinishUpload has nothing to do: the bytes are stored as they come.
func (u *upload) FinishUpload(context.Context) error { return nil }

// Terminate deletes the upload and its bytes.
func (u *upload) Terminate(ctx context.Context) error {
	tag, err := u.s.pool.Exec(ctx, `DELETE FROM upload_infos WHERE id = $1`, u.id)
	if err != nil {
		return fmt.Errorf("pgupload: terminate: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return tusd.ErrNotFound
	}
	return nil
}

type reader struct {
	ctx  context.Context
	u    *upload
	next int64
	buf  []byte
}

func (r *reader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		err := r.u.s.pool.QueryRow(r.ctx, `SELECT data FROM upload_chunks WHERE id = $1 AND off = $2`, r.u.id, r.next).Scan(&r.buf)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, io.EOF
		}
		if err != nil {
			return 0, fmt.Errorf("pgupload: read: %w", err)
		}
		r.next += int64(len(r.buf))
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *reader) Close() error { return nil }

// NewLock is the advisory lock of upload id (tusd.Locker).
func (s *Store) NewLock(id string) (tusd.Lock, error) { return &lock{s: s, id: id}, nil }

// lock is an advisory lock held on a pooled connection of its own.
type lock struct {
	s    *Store
	id   string
	conn *pgxpool.Conn
	stop chan struct{}
	wg   sync.WaitGroup
}

// Lock waits for the upload's advisory lock; while it waits, it asks the
// holder to let go (the holder polls for waiters). tusd.ErrLockTimeout
// when ctx ends first.
func (l *lock) Lock(ctx context.Context, requestUnlock func()) error {
	conn, err := l.s.pool.Acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tusd.ErrLockTimeout
		}
		return fmt.Errorf("pgupload: lock: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, lockClass, l.id); err != nil {
		// A cancelled wait leaves the connection unsure: drop it.
		_ = conn.Hijack().Close(context.Background())
		if ctx.Err() != nil {
			return tusd.ErrLockTimeout
		}
		return fmt.Errorf("pgupload: lock: %w", err)
	}
	l.conn = conn
	l.stop = make(chan struct{})
	l.wg.Add(1)
	go l.watch(requestUnlock)
	return nil
}

// watch calls requestUnlock once another request waits for the lock.
func (l *lock) watch(requestUnlock func()) {
	defer l.wg.Done()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		var waiting bool
		err := l.conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
			AND classid = $1::int4::oid AND objid = hashtext($2)::oid AND objsubid = 2 AND NOT granted)`, lockClass, l.id).Scan(&waiting)
		if err == nil && waiting {
			requestUnlock()
			return
		}
	}
}

// Unlock releases the lock and its connection.
func (l *lock) Unlock() error {
	if l.conn == nil {
		return nil
	}
	close(l.stop)
	l.wg.Wait()
	conn := l.conn
	l.conn = nil
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1, hashtext($2))`, lockClass, l.id); err != nil {
		// Closing the connection ends its session, and the lock with it.
		_ = conn.Hijack().Close(context.Background())
		return nil
	}
	conn.Release()
	return nil
}
