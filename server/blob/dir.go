package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// Dir is the local-directory Store: one server process owns the directory
// (its references are kept consistent by a mutex of that process, not by
// file locks). Its layout:
//
//	blobs/ab/abcdef…       the bytes, named by their SHA-256
//	refs/<session>/<blob>  one session's reference (JSON: name, type, size)
//	holders/<blob>/<session>  the same reference, indexed by blob
//	tmp/                   Put's bytes until they are hashed
//
// where <session> is the session id in hex (or, past 100 bytes, "h" and
// its SHA-256). A crash between the steps of Put or Release leaves at most
// a blob nobody references, never a reference without its blob.
type Dir struct {
	root   string
	mu     sync.Mutex // Put's commit, Share and Release
	closed bool
}

var _ Store = (*Dir)(nil)

// OpenDir opens (creating it if needed) the store at dir.
func OpenDir(dir string) (*Dir, error) {
	for _, sub := range []string{"blobs", "refs", "holders", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o750); err != nil {
			return nil, fmt.Errorf("blob dir: %w", err)
		}
	}
	return &Dir{root: dir}, nil
}

func (d *Dir) blobPath(id string) string { return filepath.Join(d.root, "blobs", id[:2], id) }

func sessionDir(id string) string {
	if len(id) <= 100 {
		return hex.EncodeToString([]byte(id))
	}
	sum := sha256.Sum256([]byte(id))
	return "h" + hex.EncodeToString(sum[:])
}

func (d *Dir) refPath(session, blob string) string {
	return filepath.Join(d.root, "refs", sessionDir(session), blob)
}

func (d *Dir) holderPath(blob, session string) string {
	return filepath.Join(d.root, "holders", blob, sessionDir(session))
}

func (d *Dir) isClosed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closed
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, ref Ref, r io.Reader, max int64) (Ref, error) {
	if d.isClosed() {
		return Ref{}, ErrClosed()
	}
	if ref.SessionID == "" {
		return Ref{}, synccore.Errorf(synccore.CodeBadRequest, "a file needs a session")
	}
	tmp, err := os.CreateTemp(filepath.Join(d.root, "tmp"), "put-*")
	if err != nil {
		return Ref{}, fmt.Errorf("blob dir: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), ctxReader{ctx, LimitReader(r, max)})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Ref{}, err
	}
	ref.BlobID = hex.EncodeToString(h.Sum(nil))
	ref.Size = n
	if ref.CreatedAt == 0 {
		ref.CreatedAt = time.Now().UnixMilli()
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return Ref{}, ErrClosed()
	}
	path := d.blobPath(ref.BlobID)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return Ref{}, fmt.Errorf("blob dir: %w", err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return Ref{}, fmt.Errorf("blob dir: %w", err)
		}
	} else if err != nil {
		return Ref{}, fmt.Errorf("blob dir: %w", err)
	}
	if old, err := d.readRef(ref.SessionID, ref.BlobID); err == nil {
		return old, nil
	}
	if err := d.writeRef(ref); err != nil {
		return Ref{}, err
	}
	return ref, nil
}

// writeRef writes the holder first: a crash between the two leaves a
// blob held by nothing Release walks (kept: a leak, never a blob removed
// while a reference to it exists).
func (d *Dir) writeRef(ref Ref) error {
	b, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	hp := d.holderPath(ref.BlobID, ref.SessionID)
	rp := d.refPath(ref.SessionID, ref.BlobID)
	for _, p := range []string{hp, rp} {
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			return fmt.Errorf("blob dir: %w", err)
		}
	}
	if err := os.WriteFile(hp, nil, 0o640); err != nil {
		return fmt.Errorf("blob dir: %w", err)
	}
	if err := os.WriteFile(rp+".tmp", b, 0o640); err != nil {
		return fmt.Errorf("blob dir: %w", err)
	}
	if err := os.Rename(rp+".tmp", rp); err != nil {
		return fmt.Errorf("blob dir: %w", err)
	}
	return nil
}

func (d *Dir) readRef(session, blob string) (Ref, error) {
	b, err := os.ReadFile(d.refPath(session, blob))
	if errors.Is(err, fs.ErrNotExist) {
		return Ref{}, ErrNoRef(session, blob)
	}
	if err != nil {
		return Ref{}, fmt.Errorf("blob dir: %w", err)
	}
	var ref Ref
	if err := json.Unmarshal(b, &ref); err != nil {
		return Ref{}, fmt.Errorf("blob dir: ref %s/%s: %w", session, blob, err)
	}
	return ref, nil
}

// Lookup implements Store.
func (d *Dir) Lookup(ctx context.Context, sessionID, blobID string) (Ref, error) {
	if d.isClosed() {
		return Ref{}, ErrClosed()
	}
	if err := CheckID(blobID); err != nil {
		return Ref{}, err
	}
	return d.readRef(sessionID, blobID)
}

// Open implements Store.
func (d *Dir) Open(ctx context.Context, blobID string) (Reader, error) {
	if d.isClosed() {
		return nil, ErrClosed()
	}
	if err := CheckID(blobID); err != nil {
		return nil, err
	}
	f, err := os.Open(d.blobPath(blobID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, synccore.Errorf(synccore.CodeNotFound, "blob %q not found", blobID)
	}
	if err != nil {
		return nil, fmt.Errorf("blob dir: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob dir: %w", err)
	}
	return fileReader{f, st.Size()}, nil
}

type fileReader struct {
	*os.File
	size int64
}

func (f fileReader) Size() int64 { return f.size }

// Refs implements Store.
func (d *Dir) Refs(ctx context.Context, sessionID string) ([]Ref, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed()
	}
	return d.refsLocked(sessionID)
}

func (d *Dir) refsLocked(sessionID string) ([]Ref, error) {
	entries, err := os.ReadDir(filepath.Join(d.root, "refs", sessionDir(sessionID)))
	if errors.Is(err, fs.ErrNotExist) {
		return []Ref{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blob dir: %w", err)
	}
	refs := []Ref{}
	for _, e := range entries {
		if !ValidID(e.Name()) {
			continue
		}
		ref, err := d.readRef(sessionID, e.Name())
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b Ref) int { return cmpString(a.BlobID, b.BlobID) })
	return refs, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Share implements Store.
func (d *Dir) Share(ctx context.Context, from, to string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed()
	}
	refs, err := d.refsLocked(from)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if _, err := d.readRef(to, ref.BlobID); err == nil {
			continue
		}
		ref.SessionID = to
		if err := d.writeRef(ref); err != nil {
			return err
		}
	}
	return nil
}

// Release implements Store.
func (d *Dir) Release(ctx context.Context, sessionID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed()
	}
	sdir := filepath.Join(d.root, "refs", sessionDir(sessionID))
	// A crash may have left holders without refs: walk the refs, and the
	// holders are removed per blob below.
	entries, err := os.ReadDir(sdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob dir: %w", err)
	}
	for _, e := range entries {
		blob := e.Name()
		if !ValidID(blob) {
			continue
		}
		if err := os.Remove(d.holderPath(blob, sessionID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("blob dir: %w", err)
		}
		hdir := filepath.Join(d.root, "holders", blob)
		left, err := os.ReadDir(hdir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("blob dir: %w", err)
		}
		if len(left) == 0 {
			if err := os.Remove(d.blobPath(blob)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("blob dir: %w", err)
			}
			_ = os.Remove(hdir)
		}
	}
	if err := os.RemoveAll(sdir); err != nil {
		return fmt.Errorf("blob dir: %w", err)
	}
	return nil
}

// Close implements Store.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
