package uploads_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/server/uploads"
)

// BenchmarkUpload is a 20 MiB tus upload on loopback (create, one PATCH,
// the blob hashed and stored), beside BenchmarkPlainPut: the same bytes in
// one PUT that a handler hashes into a file.
func BenchmarkUpload(b *testing.B) {
	e := startB(b)
	alice := api(e.url, "alice")
	sid, err := alice.CreateSession(b.Context(), "")
	if err != nil {
		b.Fatal(err)
	}
	const size = 20 << 20
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		file := data(size, byte(i)) // new bytes: a new blob every time
		b.StartTimer()
		if _, err := alice.Upload(b.Context(), sid.SessionID, bindings.UploadFile{Name: "b.bin", MediaType: "application/octet-stream", Body: bytes.NewReader(file), Size: size}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlainPut(b *testing.B) {
	dir := b.TempDir()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.CreateTemp(dir, "put-*")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer os.Remove(f.Name())
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(f, h), r.Body); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		_ = f.Sync()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hs.Close()
	const size = 20 << 20
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		file := data(size, byte(i))
		b.StartTimer()
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodPut, hs.URL+"/f", bytes.NewReader(file))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			b.Fatalf("PUT: %v %v", resp, err)
		}
		resp.Body.Close()
	}
}

func startB(b *testing.B) *env {
	b.Helper()
	return startTB(b, func(c *uploads.Config) { c.MediaTypes = []string{"application/octet-stream"} })
}
