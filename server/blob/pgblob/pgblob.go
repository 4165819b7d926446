// Package pgblob is the blob.Store several server nodes share: the bytes
// and the references live in PostgreSQL (the database of store/postgres
// or another), in tables of their own (blob_*).
//
// A blob's bytes are rows of at most ChunkSize bytes (bytea), so a read
// at any offset fetches one row and a range request never loads the whole
// blob. Put writes its chunks under a staging id, then in the same
// transaction locks the blob's row (inserting it if new), moves the chunks
// under the blob's id or drops them if the bytes were there already, and
// inserts the reference. Release deletes a session's references, then
// locks each of their blobs' rows and deletes those that no reference
// names any more: the row lock orders it with any Put or Share of the same
// blob, on any node.
package pgblob

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/synccore"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ChunkSize is the size of one row of a blob's bytes.
const ChunkSize = 1 << 20

// Options configure a Store; the zero value is usable.
type Options struct {
	// MaxConns bounds the connection pool; zero or less means 4.
	MaxConns int32
}

// Store is the PostgreSQL blob.Store.
type Store struct {
	pool   *pgxpool.Pool
	closed atomic.Bool
}

var _ blob.Store = (*Store)(nil)

const schema = `
CREATE TABLE IF NOT EXISTS blob_objects (
	blob_id    text PRIMARY KEY,
	size       bigint NOT NULL CHECK (size >= 0),
	chunk_size int NOT NULL CHECK (chunk_size > 0),
	created_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_chunks (
	blob_id text NOT NULL,
	n       int NOT NULL CHECK (n >= 0),
	data    bytea NOT NULL,
	PRIMARY KEY (blob_id, n)
);
CREATE TABLE IF NOT EXISTS blob_refs (
	session_id text NOT NULL,
	blob_id    text NOT NULL REFERENCES blob_objects (blob_id),
	filename   text NOT NULL,
	media_type text NOT NULL,
	created_at bigint NOT NULL,
	PRIMARY KEY (session_id, blob_id)
);
CREATE INDEX IF NOT EXISTS blob_refs_by_blob ON blob_refs (blob_id);
`

// Open connects to the database at url and creates the tables if needed.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgblob: parse url: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgblob: connect: %w", err)
	}
	// One node creates the tables at a time (CREATE ... IF NOT EXISTS
	// races otherwise).
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('agentsync blob schema'))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgblob: create tables: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Close closes the pool once the connections in use come back.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		s.pool.Close()
	}
	return nil
}

func (s *Store) typed(err error) error {
	if err != nil && s.closed.Load() {
		return blob.ErrClosed()
	}
	return err
}

func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if s.closed.Load() {
		return blob.ErrClosed()
	}
	return s.typed(pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn))
}

// Put implements blob.Store.
func (s *Store) Put(ctx context.Context, ref blob.Ref, r io.Reader, max int64) (blob.Ref, error) {
	if ref.SessionID == "" {
		return blob.Ref{}, synccore.Errorf(synccore.CodeBadRequest, "a file needs a session")
	}
	if ref.CreatedAt == 0 {
		ref.CreatedAt = time.Now().UnixMilli()
	}
	var salt [12]byte
	_, _ = rand.Read(salt[:])
	staging := "tmp-" + hex.EncodeToString(salt[:])
	var out blob.Ref
	err := s.tx(ctx, func(tx pgx.Tx) error {
		h := sha256.New()
		src := blob.LimitReader(r, max)
		buf := make([]byte, ChunkSize)
		var size int64
		for n := 0; ; n++ {
			k, err := io.ReadFull(src, buf)
			if k > 0 {
				h.Write(buf[:k])
				size += int64(k)
				if _, err := tx.Exec(ctx, `INSERT INTO blob_chunks (blob_id, n, data) VALUES ($1, $2, $3)`, staging, n, buf[:k]); err != nil {
					return err
				}
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		ref.BlobID = hex.EncodeToString(h.Sum(nil))
		ref.Size = size
		// Lock the blob's row, inserting it if new (then the staged
		// chunks become its bytes).
		var inserted bool
		err := tx.QueryRow(ctx, `INSERT INTO blob_objects (blob_id, size, chunk_size, created_at)
			VALUES ($1, $2, $3, $4)
			ON CONFLICT (blob_id) DO UPDATE SET size = blob_objects.size
			RETURNING xmax = 0`, ref.BlobID, size, ChunkSize, ref.CreatedAt).Scan(&inserted)
		if err != nil {
			return err
		}
		if inserted {
			_, err = tx.Exec(ctx, `UPDATE blob_chunks SET blob_id = $1 WHERE blob_id = $2`, ref.BlobID, staging)
		} else {
			_, err = tx.Exec(ctx, `DELETE FROM blob_chunks WHERE blob_id = $1`, staging)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO blob_refs (session_id, blob_id, filename, media_type, created_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
			ref.SessionID, ref.BlobID, ref.Filename, ref.MediaType, ref.CreatedAt); err != nil {
			return err
		}
		out, err = lookup(ctx, tx, ref.SessionID, ref.BlobID)
		return err
	})
	return out, err
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func lookup(ctx context.Context, q querier, sessionID, blobID string) (blob.Ref, error) {
	ref := blob.Ref{SessionID: sessionID, BlobID: blobID}
	err := q.QueryRow(ctx, `SELECT r.filename, r.media_type, r.created_at, o.size
		FROM blob_refs r JOIN blob_objects o USING (blob_id)
		WHERE r.session_id = $1 AND r.blob_id = $2`, sessionID, blobID).
		Scan(&ref.Filename, &ref.MediaType, &ref.CreatedAt, &ref.Size)
	if errors.Is(err, pgx.ErrNoRows) {
		return blob.Ref{}, blob.ErrNoRef(sessionID, blobID)
	}
	return ref, err
}

// Lookup implements blob.Store.
func (s *Store) Lookup(ctx context.Context, sessionID, blobID string) (blob.Ref, error) {
	if err := blob.CheckID(blobID); err != nil {
		return blob.Ref{}, err
	}
	if s.closed.Load() {
		return blob.Ref{}, blob.ErrClosed()
	}
	ref, err := lookup(ctx, s.pool, sessionID, blobID)
	return ref, s.typed(err)
}

// Refs implements blob.Store.
func (s *Store) Refs(ctx context.Context, sessionID string) ([]blob.Ref, error) {
	if s.closed.Load() {
		return nil, blob.ErrClosed()
	}
	rows, err := s.pool.Query(ctx, `SELECT r.blob_id, r.filename, r.media_type, r.created_at, o.size
		FROM blob_refs r JOIN blob_objects o USING (blob_id)
		WHERE r.session_id = $1 ORDER BY r.blob_id`, sessionID)
	if err != nil {
		return nil, s.typed(err)
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (blob.Ref, error) {
		ref := blob.Ref{SessionID: sessionID}
		err := row.Scan(&ref.BlobID, &ref.Filename, &ref.MediaType, &ref.CreatedAt, &ref.Size)
		return ref, err
	})
	if refs == nil {
		refs = []blob.Ref{}
	}
	return refs, s.typed(err)
}

// Share implements blob.Store.
func (s *Store) Share(ctx context.Context, from, to string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		// Lock the blobs first (in id order, as Release does), so a
		// concurrent Release of from cannot remove one in between.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM blob_objects WHERE blob_id IN
			(SELECT blob_id FROM blob_refs WHERE session_id = $1) ORDER BY blob_id FOR UPDATE`, from); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO blob_refs (session_id, blob_id, filename, media_type, created_at)
			SELECT $2, blob_id, filename, media_type, created_at FROM blob_refs WHERE session_id = $1
			ON CONFLICT DO NOTHING`, from, to)
		return err
	})
}

// Release implements blob.Store.
func (s *Store) Release(ctx context.Context, sessionID string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM blob_refs WHERE session_id = $1 RETURNING blob_id`, sessionID)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		// Lock the blobs, then (a new statement: a new snapshot under READ
		// COMMITTED) see which ones a committed reference still names.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM blob_objects WHERE blob_id = ANY($1) ORDER BY blob_id FOR UPDATE`, ids); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `DELETE FROM blob_objects o WHERE o.blob_id = ANY($1)
			AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.blob_id = o.blob_id) RETURNING blob_id`, ids)
		if err != nil {
			return err
		}
		gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(gone) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM blob_chunks WHERE blob_id = ANY($1)`, gone)
		return err
	})
}

// Open implements blob.Store. The reader fetches one chunk row per read
// that crosses into it; it holds no transaction or connection between
// reads.
func (s *Store) Open(ctx context.Context, blobID string) (blob.Reader, error) {
	if err := blob.CheckID(blobID); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, blob.ErrClosed()
	}
	r := &reader{s: s, ctx: ctx, id: blobID, chunk: -1}
	err := s.pool.QueryRow(ctx, `SELECT size, chunk_size FROM blob_objects WHERE blob_id = $1`, blobID).Scan(&r.size, &r.chunkSize)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, synccore.Errorf(synccore.CodeNotFound, "blob %q not found", blobID)
	}
	if err != nil {
		return nil, s.typed(err)
	}
	return r, nil
}

type reader struct {
	s         *Store
	ctx       context.Context
	id        string
	size      int64
	chunkSize int64
	off       int64
	chunk     int64 // the chunk in buf, -1 for none
	buf       []byte
}

func (r *reader) Size() int64  { return r.size }
func (r *reader) Close() error { r.buf = nil; return nil }

func (r *reader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := r.off / r.chunkSize
	if n != r.chunk {
		r.buf = r.buf[:0]
		err := r.s.pool.QueryRow(r.ctx, `SELECT data FROM blob_chunks WHERE blob_id = $1 AND n = $2`, r.id, n).Scan(&r.buf)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, synccore.Errorf(synccore.CodeNotFound, "blob %q was removed", r.id)
		}
		if err != nil {
			return 0, r.s.typed(err)
		}
		r.chunk = n
	}
	k := copy(p, r.buf[r.off-n*r.chunkSize:])
	if k == 0 {
		return 0, io.ErrUnexpectedEOF // a chunk shorter than the size says
	}
	r.off += int64(k)
	return k, nil
}

func (r *reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("pgblob: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("pgblob: negative position")
	}
	r.off = offset
	return offset, nil
}
