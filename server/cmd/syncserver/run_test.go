package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
)

// lineWriter hands each "listening on" URL to a channel.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	urls chan string
	// metrics, if set, gets each "metrics on" URL.
	metrics chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.WriteString(line) // keep the partial line
			return len(p), nil
		}
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on "); ok {
			w.urls <- u
		}
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "metrics on "); ok && w.metrics != nil {
			w.metrics <- u
		}
	}
}

func TestRunServesAndStops(t *testing.T) {
	db := filepath.Join(t.TempDir(), "nested", "dir", "dev.db") // directories are created
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{urls: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-db", db, "-speed", "0", "-log-level", "warn", "-origins", "http://a.example, http://b.example"}, out)
	}()
	var url string
	select {
	case url = <-out.urls:
	case err := <-errc:
		t.Fatalf("run returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line")
	}

	get := func(path string) (int, string, string) {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
	}
	if st, _, body := get("/healthz"); st != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("healthz %d %s", st, body)
	}
	if st, ct, body := get("/"); st != 200 || !strings.HasPrefix(ct, "text/html") || !strings.Contains(strings.ToLower(body), "<html") {
		t.Fatalf("demo page: %d %s %.100s", st, ct, body)
	}
	if st, ct, body := get("/js/index.js"); st != 200 || !strings.Contains(ct, "javascript") || !strings.Contains(body, "export") {
		t.Fatalf("/js/index.js: %d %s", st, ct)
	}
	if st, ct, body := get("/js/agentsync.wasm"); st != 200 || ct != "application/wasm" || !strings.HasPrefix(body, "\x00asm") {
		t.Fatalf("/js/agentsync.wasm: %d %s", st, ct)
	}
	if st, ct, _ := get("/v1/nope"); st != 404 || !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("unknown API route: %d %s", st, ct)
	}
	resp, err := http.Post(url+"/v1/sessions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var sess struct {
		SessionID string `json:"session_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&sess); err != nil || resp.StatusCode != 201 || sess.SessionID == "" {
		t.Fatalf("create session: %d %v %+v", resp.StatusCode, err, sess)
	}
	resp.Body.Close()
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("db file: %v", err)
	}
	// Files are on by default: an upload lands in files/ beside the db.
	a := &bindings.API{BaseURL: url, HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	text := []byte("a file beside the db")
	f, err := a.Upload(ctx, sess.SessionID, bindings.UploadFile{Name: "a.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if st, ct, body := get(f.URL); st != 200 || ct != "text/plain" || body != string(text) {
		t.Fatalf("GET %s: %d %s %q", f.URL, st, ct, body)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "files", "blobs", f.BlobID[:2], f.BlobID)); err != nil {
		t.Fatalf("blob file: %v", err)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop after cancel")
	}
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Fatal("server still answers after shutdown")
	}
}

func TestRunFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-speed", "fast"},
		{"-speed", "-1s"},
		{"-log-level", "loud"},
		{"-nope"},
		{"extra"},
		{"-addr", "256.0.0.1:99999", "-db", filepath.Join(t.TempDir(), "x.db")},
	} {
		err := run(context.Background(), args, io.Discard)
		if err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}

func TestRunWithTokenAndOrigins(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{urls: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "t.db"),
			"-token", "tok", "-origins", "http://ui.example", "-log-level", "error"}, out)
	}()
	var url string
	select {
	case url = <-out.urls:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line")
	}
	status := func(hdr ...string) int {
		req, _ := http.NewRequest("GET", url+"/v1/sessions", nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := status(); st != 401 {
		t.Fatalf("no token: %d", st)
	}
	if st := status("Authorization", "Bearer tok"); st != 200 {
		t.Fatalf("token: %d", st)
	}
	if st := status("Authorization", "Bearer tok", "Origin", "http://ui.example"); st != 200 {
		t.Fatalf("allowed origin: %d", st)
	}
	if st := status("Authorization", "Bearer tok", "Origin", "http://evil.example"); st != 403 {
		t.Fatalf("other origin: %d", st)
	}
	// The demo page itself is public: a browser cannot send the token.
	resp, err := http.Get(url + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("demo page with a token configured: %v %v", err, resp)
	}
	resp.Body.Close()
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// -metrics-addr serves the metrics on a listener of their own, not on the
// public API; the probes answer on the public API without the token.
func TestRunServesMetricsApart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lineWriter{urls: make(chan string, 1), metrics: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "m.db"),
			"-token", "tok", "-metrics-addr", "127.0.0.1:0", "-log-level", "error"}, out)
	}()
	var url, metricsURL string
	for url == "" || metricsURL == "" {
		select {
		case url = <-out.urls:
		case metricsURL = <-out.metrics:
		case err := <-errc:
			t.Fatalf("run: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("no listening or metrics line")
		}
	}
	get := func(u string, hdr ...string) (int, string) {
		req, _ := http.NewRequest("GET", u, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if st, _ := get(url+"/v1/sessions", "Authorization", "Bearer tok"); st != 200 {
		t.Fatalf("list sessions: %d", st)
	}
	for _, p := range []string{"/livez", "/readyz"} {
		if st, body := get(url + p); st != 200 || !strings.Contains(body, `"ok":true`) {
			t.Fatalf("%s without a token: %d %s", p, st, body)
		}
	}
	st, body := get(metricsURL)
	if st != 200 || !strings.Contains(body, `agentsync_http_requests_total{code="200",route="GET /v1/sessions"} 1`) ||
		!strings.Contains(body, "agentsync_sessions_loaded") {
		t.Fatalf("metrics: %d\n%s", st, body)
	}
	if _, body := get(url+"/metrics", "Authorization", "Bearer tok"); strings.Contains(body, "agentsync_http_requests_total") {
		t.Fatal("the public API serves the metrics")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := http.Get(metricsURL); err == nil {
		t.Fatal("metrics still served after shutdown")
	}
}
