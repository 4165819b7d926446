// Package blob defines where the server keeps the bytes of files that
// messages carry by reference (docs/files.md): the Store interface, and Dir,
// the local-directory store (one node: the default of syncserver).
// server/blob/pgblob is the store several nodes share (PostgreSQL).
//
// Blobs are content-addressed: a blob's id is the lower-case hex SHA-256
// of its bytes, so the same bytes uploaded twice are kept once. A blob is
// referenced by (session, blob) rows, each with the file name and media
// type that session knows it by; a blob lives while one row references it
// and is removed with the last one. Release drops a session's rows (the
// server calls it when the session is deleted); Share copies them to
// another session, which is how a fork of a conversation will keep the
// files of the messages it shares, so a parent's delete never takes a
// blob a fork still references.
//
// Errors are *synccore.Error: CodeNotFound for an unknown blob or a
// session that does not reference it, CodeBadRequest for a malformed id,
// CodeTooLarge past Put's bound, CodeClosed after Close.
package blob

import (
	"context"
	"io"
	"net/url"
	"strings"

	"github.com/agentsync/agentsync/synccore"
)

// Ref is one session's reference to a blob: a file of that session.
type Ref struct {
	SessionID string `json:"session_id"`
	BlobID    string `json:"blob_id"`
	Filename  string `json:"filename"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	CreatedAt int64  `json:"created_at"` // Unix ms
}

// Store keeps blobs and the sessions' references to them. Implementations
// are safe for concurrent use.
type Store interface {
	// Put reads r to its end (at most max bytes when max > 0, else
	// CodeTooLarge and nothing is kept), stores the bytes unless a blob
	// with the same SHA-256 exists, and references the blob from
	// ref.SessionID, in one step: no Release can remove the blob between
	// the two. BlobID and Size are set from the bytes, a zero CreatedAt
	// to now. A session that already references the blob keeps its
	// reference as it was; Put returns the reference as stored.
	Put(ctx context.Context, ref Ref, r io.Reader, max int64) (Ref, error)
	// Lookup returns session's reference to blob id.
	Lookup(ctx context.Context, sessionID, blobID string) (Ref, error)
	// Open opens a blob's bytes for reading, with seeks (range requests).
	Open(ctx context.Context, blobID string) (Reader, error)
	// Refs lists a session's references, by blob id.
	Refs(ctx context.Context, sessionID string) ([]Ref, error)
	// Share references every blob of from from to as well, with the same
	// names and types (a fork). References to keeps are kept.
	Share(ctx context.Context, from, to string) error
	// Release removes every reference of session and each blob no other
	// session references any more. A session without any is no error.
	Release(ctx context.Context, sessionID string) error
	// Close releases the store; calls after it fail with CodeClosed.
	Close() error
}

// Reader reads one blob.
type Reader interface {
	io.ReadSeekCloser
	// Size is the blob's length in bytes.
	Size() int64
}

// ValidID reports whether id has the shape of a blob id: 64 lower-case
// hex digits.
func ValidID(id string) bool {
	if len(id) != 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CheckID is ValidID as a typed error.
func CheckID(id string) error {
	if !ValidID(id) {
		return synccore.Errorf(synccore.CodeBadRequest, "blob id %q is not a hex SHA-256", id)
	}
	return nil
}

// ErrNoRef is the typed answer for a blob the session does not reference
// (or that does not exist), the same either way.
func ErrNoRef(sessionID, blobID string) error {
	return synccore.Errorf(synccore.CodeNotFound, "file %q not found in session %q", blobID, sessionID)
}

// ErrTooLarge is Put's answer past its bound.
func ErrTooLarge(max int64) error {
	return synccore.Errorf(synccore.CodeTooLarge, "file over the %d-byte limit", max)
}

// ErrClosed is the answer of a closed store.
func ErrClosed() error { return synccore.Errorf(synccore.CodeClosed, "blob store is closed") }

// LimitReader reads r and fails with ErrTooLarge once more than max bytes
// came (max <= 0: no bound).
func LimitReader(r io.Reader, max int64) io.Reader {
	if max <= 0 {
		return r
	}
	return &limited{r: r, left: max, max: max}
}

type limited struct {
	r         io.Reader
	left, max int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrTooLarge(l.max)
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, ErrTooLarge(l.max)
	}
	return n, err
}

// FilePath is the path, relative to the server's root, of a session's
// file: the URL its file parts carry, which the server's authorized file
// route serves (docs/files.md).
func FilePath(sessionID, blobID string) string {
	return "/v1/sessions/" + url.PathEscape(sessionID) + "/files/" + blobID
}

// ParseFilePath reads a FilePath (a query, as a signed URL's, is ignored):
// the session it names and the blob id; ok is false for any other URL.
func ParseFilePath(u string) (sessionID, blobID string, ok bool) {
	u, _, _ = strings.Cut(u, "?")
	rest, ok := strings.CutPrefix(u, "/v1/sessions/")
	if !ok {
		return "", "", false
	}
	sid, id, ok := strings.Cut(rest, "/files/")
	if !ok || !ValidID(id) {
		return "", "", false
	}
	sid, err := url.PathUnescape(sid)
	if err != nil || sid == "" || strings.Contains(sid, "/") {
		return "", "", false
	}
	return sid, id, true
}
