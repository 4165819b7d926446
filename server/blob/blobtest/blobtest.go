// Package blobtest is the conformance suite every blob.Store passes.
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/synccore"
)

// Run runs the suite; open returns a new, empty store for each subtest.
func Run(t *testing.T, open func(t *testing.T) blob.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s blob.Store)
	}{
		{"PutOpenRange", testPutOpen},
		{"ContentAddressed", testContentAddressed},
		{"TooLarge", testTooLarge},
		{"OtherSessionNotFound", testOtherSession},
		{"ReleaseRemovesUnreferenced", testRelease},
		{"ShareKeepsBlobForFork", testShare},
		{"ConcurrentPutRelease", testConcurrent},
		{"BadID", testBadID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			tc.fn(t, s)
		})
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Bytes is n pseudo-random bytes from seed.
func Bytes(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func put(t *testing.T, s blob.Store, session string, data []byte) blob.Ref {
	t.Helper()
	ref, err := s.Put(ctxOf(t), blob.Ref{SessionID: session, Filename: "f.bin", MediaType: "application/octet-stream"}, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	return ref
}

func readAll(t *testing.T, s blob.Store, id string) ([]byte, error) {
	t.Helper()
	r, err := s.Open(ctxOf(t), id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var te *synccore.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

func testPutOpen(t *testing.T, s blob.Store) {
	data := Bytes(2<<20+12345, 1) // more than two chunks of pgblob
	ref, err := s.Put(ctxOf(t), blob.Ref{SessionID: "s1", Filename: "a.png", MediaType: "image/png"}, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if ref.BlobID != sum(data) || ref.Size != int64(len(data)) || ref.Filename != "a.png" || ref.MediaType != "image/png" || ref.CreatedAt == 0 {
		t.Fatalf("ref %+v, want id %s size %d", ref, sum(data), len(data))
	}
	got, err := s.Lookup(ctxOf(t), "s1", ref.BlobID)
	if err != nil || got != ref {
		t.Fatalf("Lookup = %+v, %v; want %+v", got, err, ref)
	}
	all, err := readAll(t, s, ref.BlobID)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("read back %d bytes (%v), want %d equal ones", len(all), err, len(data))
	}
	r, err := s.Open(ctxOf(t), ref.BlobID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("Size %d, want %d", r.Size(), len(data))
	}
	for _, off := range []int64{0, 1<<20 - 3, 2 << 20, int64(len(data)) - 10} {
		if _, err := r.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if !bytes.Equal(buf, data[off:off+10]) {
			t.Fatalf("bytes at %d differ", off)
		}
	}
	if end, err := r.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Fatalf("Seek end = %d, %v", end, err)
	}
	if n, err := r.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("read at end = %d, %v; want 0, EOF", n, err)
	}
	refs, err := s.Refs(ctxOf(t), "s1")
	if err != nil || len(refs) != 1 || refs[0] != ref {
		t.Fatalf("Refs = %+v, %v", refs, err)
	}
	empty := put(t, s, "s1", nil)
	if b, err := readAll(t, s, empty.BlobID); err != nil || len(b) != 0 || empty.Size != 0 {
		t.Fatalf("empty blob: %d bytes, %v", len(b), err)
	}
}

func testContentAddressed(t *testing.T, s blob.Store) {
	data := Bytes(1000, 2)
	a := put(t, s, "s1", data)
	b, err := s.Put(ctxOf(t), blob.Ref{SessionID: "s1", Filename: "other.txt", MediaType: "text/plain"}, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if b != a {
		t.Fatalf("second Put of the same bytes in one session = %+v, want the first ref %+v", b, a)
	}
	c := put(t, s, "s2", data)
	if c.BlobID != a.BlobID || c.SessionID != "s2" {
		t.Fatalf("other session's ref %+v", c)
	}
}

func testTooLarge(t *testing.T, s blob.Store) {
	_, err := s.Put(ctxOf(t), blob.Ref{SessionID: "s1"}, bytes.NewReader(Bytes(1001, 3)), 1000)
	wantCode(t, err, synccore.CodeTooLarge)
	if refs, _ := s.Refs(ctxOf(t), "s1"); len(refs) != 0 {
		t.Fatalf("refused Put left refs %+v", refs)
	}
	_, err = readAll(t, s, sum(Bytes(1001, 3)))
	wantCode(t, err, synccore.CodeNotFound)
	if _, err := s.Put(ctxOf(t), blob.Ref{SessionID: "s1"}, bytes.NewReader(Bytes(1000, 3)), 1000); err != nil {
		t.Fatalf("Put of exactly the bound: %v", err)
	}
}

func testOtherSession(t *testing.T, s blob.Store) {
	a := put(t, s, "s1", Bytes(10, 4))
	_, err := s.Lookup(ctxOf(t), "s2", a.BlobID)
	wantCode(t, err, synccore.CodeNotFound)
	_, err = s.Lookup(ctxOf(t), "s1", sum([]byte("nothing")))
	wantCode(t, err, synccore.CodeNotFound)
}

func testRelease(t *testing.T, s blob.Store) {
	shared := Bytes(3000, 5)
	only := Bytes(4000, 6)
	a := put(t, s, "s1", shared)
	put(t, s, "s2", shared)
	b := put(t, s, "s1", only)
	if err := s.Release(ctxOf(t), "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctxOf(t), "s1", a.BlobID); err == nil {
		t.Fatal("s1's ref outlived its release")
	}
	if got, err := readAll(t, s, a.BlobID); err != nil || !bytes.Equal(got, shared) {
		t.Fatalf("blob s2 references: %v", err)
	}
	_, err := readAll(t, s, b.BlobID)
	wantCode(t, err, synccore.CodeNotFound)
	if err := s.Release(ctxOf(t), "s2"); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, s, a.BlobID)
	wantCode(t, err, synccore.CodeNotFound)
	if err := s.Release(ctxOf(t), "never"); err != nil {
		t.Fatalf("Release of a session without files: %v", err)
	}
}

func testShare(t *testing.T, s blob.Store) {
	data := Bytes(5000, 7)
	a := put(t, s, "parent", data)
	if err := s.Share(ctxOf(t), "parent", "fork"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lookup(ctxOf(t), "fork", a.BlobID)
	if err != nil || got.Filename != a.Filename || got.MediaType != a.MediaType || got.Size != a.Size {
		t.Fatalf("fork's ref %+v, %v", got, err)
	}
	if err := s.Release(ctxOf(t), "parent"); err != nil {
		t.Fatal(err)
	}
	if b, err := readAll(t, s, a.BlobID); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the fork's blob went with its parent: %v", err)
	}
	if err := s.Release(ctxOf(t), "fork"); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, s, a.BlobID)
	wantCode(t, err, synccore.CodeNotFound)
}

// testConcurrent: sessions that put and release the same bytes at once
// never lose a blob that a live reference names.
func testConcurrent(t *testing.T, s blob.Store) {
	data := Bytes(70000, 8)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := string(rune('a' + i))
			for range 4 {
				ref, err := s.Put(ctxOf(t), blob.Ref{SessionID: sess}, bytes.NewReader(data), 0)
				if err != nil {
					errs <- err
					return
				}
				r, err := s.Open(ctxOf(t), ref.BlobID)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(r)
				r.Close()
				if err != nil || !bytes.Equal(b, data) {
					errs <- errors.New("a referenced blob read wrong")
					return
				}
				if err := s.Release(ctxOf(t), sess); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_, err := readAll(t, s, sum(data))
	wantCode(t, err, synccore.CodeNotFound)
}

func testBadID(t *testing.T, s blob.Store) {
	_, err := s.Open(ctxOf(t), "../../etc/passwd")
	wantCode(t, err, synccore.CodeBadRequest)
	_, err = s.Lookup(ctxOf(t), "s1", "ABC")
	wantCode(t, err, synccore.CodeBadRequest)
}
