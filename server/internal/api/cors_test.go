package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// TestPublicFilesCORS: an app on another port imports /js/*.js and fetches
// /js/agentsync.wasm; allowed origins get CORS headers on both, others get
// the bytes without them (their browser refuses), and the API refuses them.
func TestPublicFilesCORS(t *testing.T) {
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	srv := httptest.NewServer(New(Config{
		AllowedOrigins: []string{"http://localhost:5173"},
		Files:          publicTree(wasm),
	}))
	defer srv.Close()

	get := func(path, origin string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	for _, path := range []string{"/js/index.js", "/js/agentsync.wasm"} {
		res := get(path, "http://localhost:5173")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", path, res.StatusCode)
		}
		if got := res.Header.Get("Access-Control-Allow-Origin"); got != "http://localhost:5173" {
			t.Errorf("%s from an allowed origin: Access-Control-Allow-Origin %q", path, got)
		}
		if got := res.Header.Get("Vary"); got != "Origin" {
			t.Errorf("%s: Vary %q, want Origin", path, got)
		}
		if got := res.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(got, "Retry-After") ||
			!strings.Contains(got, "Upload-Offset") || !strings.Contains(got, "Agentsync-File-Url") {
			t.Errorf("%s: Access-Control-Expose-Headers %q, want Retry-After and the upload headers", path, got)
		}
		res = get(path, "http://evil.example")
		if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s from another origin: status %d, Access-Control-Allow-Origin %q", path, res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	res := get("/js/agentsync.wasm", "http://localhost:5173")
	body, _ := io.ReadAll(res.Body)
	if string(body) != string(wasm) {
		t.Errorf("module: %d bytes", len(body))
	}
	if res := get("/v1/sessions", "http://evil.example"); res.StatusCode != http.StatusForbidden {
		t.Errorf("API from a refused origin: status %d, want 403", res.StatusCode)
	}
}

// publicTree is a Files handler holding a script and a module, as
// server/web's would.
func publicTree(wasm []byte) http.Handler {
	return http.FileServerFS(fstest.MapFS{
		"js/index.js":       {Data: []byte("export {};\n")},
		"js/agentsync.wasm": {Data: wasm},
	})
}
