package uploads_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/server/uploads"
	"github.com/agentsync/agentsync/synccore"
)

// byToken: the bearer token is the principal ("alice", "bob").
var byToken = auth.Func(func(r *http.Request, token string) (string, error) {
	if token == "" {
		return "", auth.ErrUnauthorized
	}
	return token, nil
})

type env struct {
	url   string
	blobs *blob.Dir
	up    *uploads.Handler
	upDir string
}

// start serves a server with files on loopback: a SQLite store, the
// local-directory blob store and the tus uploads, in t's temp dir.
func start(t *testing.T, tweak func(*uploads.Config)) *env {
	t.Helper()
	return startTB(t, tweak)
}

func startTB(t testing.TB, tweak func(*uploads.Config)) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "agent.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.OpenDir(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	ucfg := uploads.Config{Blobs: blobs, Dir: filepath.Join(dir, "uploads")}
	if tweak != nil {
		tweak(&ucfg)
	}
	up, err := uploads.New(ucfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{Store: st, Authorizer: byToken,
		Attachments: &server.Attachments{Blobs: blobs, Uploads: up}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(cctx)
		hs.CloseClientConnections()
		hs.Close()
		_ = blobs.Close()
		_ = st.Close()
	})
	return &env{url: hs.URL, blobs: blobs, up: up, upDir: ucfg.Dir}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func api(base, who string) *bindings.API {
	return &bindings.API{BaseURL: base, Token: who, HTTPClient: &http.Client{Timeout: time.Minute}}
}

func session(t *testing.T, a *bindings.API) string {
	t.Helper()
	s, err := a.CreateSession(ctxOf(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return s.SessionID
}

func data(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 7
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var te *synccore.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// get fetches path as who ("" for no token), with extra headers.
func get(t *testing.T, base, path, who string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxOf(t), http.MethodGet, base+path, nil)
	if who != "" {
		req.Header.Set("Authorization", "Bearer "+who)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// cutProxy forwards TCP connections to target and cuts each of the first
// len(cuts) connections once it has carried cuts[i] bytes to the server.
type cutProxy struct {
	ln       net.Listener
	target   string
	mu       sync.Mutex
	cuts     []int64
	cutsDone atomic.Int32
	upstream atomic.Int64 // bytes carried to the server, all connections
}

func newCutProxy(t *testing.T, target string, cuts ...int64) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, cuts: cuts}
	t.Cleanup(func() { ln.Close() })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *cutProxy) handle(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	p.mu.Lock()
	limit := int64(-1)
	if len(p.cuts) > 0 {
		limit, p.cuts = p.cuts[0], p.cuts[1:]
	}
	p.mu.Unlock()
	go func() { _, _ = io.Copy(c, s); c.Close() }()
	buf := make([]byte, 32<<10)
	var carried int64
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if limit >= 0 && carried+int64(n) > limit {
				p.cutsDone.Add(1)
				return // both sides close: a cut mid-request
			}
			if _, werr := s.Write(buf[:n]); werr != nil {
				return
			}
			carried += int64(n)
			p.upstream.Add(int64(n))
		}
		if err != nil {
			return
		}
	}
}

// TestResumeAfterTwoCuts: a 20 MB upload cut twice mid-way by a proxy
// resumes from the server's offset each time, and its blob's SHA-256 is
// the file's.
func TestResumeAfterTwoCuts(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *uploads.Config) { c.MediaTypes = []string{"application/octet-stream"} })
	const size = 20 << 20
	file := data(size, 1)
	path := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	proxy := newCutProxy(t, strings.TrimPrefix(e.url, "http://"), 7<<20, 7<<20)
	// A client of its own: every connection is new after a cut.
	alice := api("http://"+proxy.ln.Addr().String(), "alice")
	alice.HTTPClient = &http.Client{Timeout: time.Minute, Transport: &http.Transport{}}
	sid := session(t, api(e.url, "alice"))
	var resumes []int64
	var lastSeen int64
	done, err := alice.Upload(ctxOf(t), sid, bindings.UploadFile{
		Name: "big.bin", MediaType: "application/octet-stream", Body: f, Size: size,
		Progress: func(sent, total int64) {
			if sent < lastSeen { // a resume: the server's offset
				resumes = append(resumes, sent)
			}
			lastSeen = sent
		},
	})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if got := proxy.cutsDone.Load(); got != 2 {
		t.Fatalf("the proxy cut %d times, want 2", got)
	}
	if len(resumes) != 2 || resumes[0] <= 0 || resumes[1] <= resumes[0] {
		t.Fatalf("resumed at offsets %v, want two growing ones above 0", resumes)
	}
	// Restarting from 0 would carry 7+7+20 MB; resuming carries the file
	// once plus what the cuts lost in flight.
	if up := proxy.upstream.Load(); up >= 27<<20 {
		t.Fatalf("%d bytes went to the server for a %d-byte file: not resumed", up, size)
	}
	t.Logf("resumed at %v; %d bytes carried for %d", resumes, proxy.upstream.Load(), size)
	if done.BlobID != hexSum(file) || done.Size != size {
		t.Fatalf("file %+v, want blob %s", done, hexSum(file))
	}
	r, err := e.blobs.Open(ctxOf(t), done.BlobID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hexSum(file) {
		t.Fatalf("stored blob's SHA-256 %s, file's %s", got, hexSum(file))
	}
	// The finished upload's bytes are gone from the uploads directory.
	if left := dirFiles(t, e.upDir); len(left) != 0 {
		t.Fatalf("uploads directory keeps %v", left)
	}
}

func dirFiles(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRefusals: over the limit and forbidden media types are typed
// refusals at creation, before any byte is stored; bytes that are not
// the image they claim are refused at the end, and not kept.
func TestRefusals(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *uploads.Config) { c.MaxSize = 1 << 20 })
	alice := api(e.url, "alice")
	sid := session(t, alice)
	big := data(1<<20+1, 2)
	_, err := alice.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "a.txt", MediaType: "text/plain", Body: bytes.NewReader(big), Size: int64(len(big))})
	wantCode(t, err, synccore.CodeTooLarge)
	small := []byte("<html><script>alert(1)</script></html>")
	_, err = alice.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "x.html", MediaType: "text/html", Body: bytes.NewReader(small), Size: int64(len(small))})
	wantCode(t, err, synccore.CodeForbidden)
	_, err = alice.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "x.exe", Body: bytes.NewReader(small), Size: int64(len(small))})
	wantCode(t, err, synccore.CodeForbidden)
	if left := dirFiles(t, e.upDir); len(left) != 0 {
		t.Fatalf("refused uploads stored %v", left)
	}
	_, err = alice.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "fake.png", MediaType: "image/png", Body: bytes.NewReader(small), Size: int64(len(small))})
	wantCode(t, err, synccore.CodeForbidden)
	if left := dirFiles(t, e.upDir); len(left) != 0 {
		t.Fatalf("a refused upload left %v", left)
	}
	if refs, err := e.blobs.Refs(ctxOf(t), sid); err != nil || len(refs) != 0 {
		t.Fatalf("refused uploads became files: %+v, %v", refs, err)
	}
	// The raw answer is the typed JSON body.
	req, _ := http.NewRequestWithContext(ctxOf(t), http.MethodPost, e.url+"/v1/uploads", nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Tus-Resumable", "1.0.0")
	req.Header.Set("Upload-Length", "5000000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body synccore.Error
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 413 || body.Code != synccore.CodeTooLarge {
		t.Fatalf("raw refusal: %d %+v %v", resp.StatusCode, body, err)
	}
}

// TestReadAuthorized: the owner reads the file with its type, name and
// ranges; another principal gets 404 for the file, the upload and the
// session; a signed URL reads without a token until it expires.
func TestReadAuthorized(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	alice, bob := api(e.url, "alice"), api(e.url, "bob")
	sid := session(t, alice)
	text := []byte(strings.Repeat("hello, file\n", 1000))
	var uploadURL string
	done, err := alice.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "notes ü.txt", MediaType: "text/plain; charset=utf-8",
		Body: bytes.NewReader(text), Size: int64(len(text)), Started: func(u string) { uploadURL = u }})
	if err != nil {
		t.Fatal(err)
	}
	if done.URL != server.FilePath(sid, hexSum(text)) {
		t.Fatalf("file URL %q", done.URL)
	}
	resp, b := get(t, e.url, done.URL, "alice")
	if resp.StatusCode != 200 || !bytes.Equal(b, text) {
		t.Fatalf("owner GET: %d, %d bytes", resp.StatusCode, len(b))
	}
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "text/plain; charset=utf-8" ||
		cd != "inline; filename*=utf-8''notes%20%C3%BC.txt" {
		t.Fatalf("Content-Type %q, Content-Disposition %q", ct, cd)
	}
	resp, b = get(t, e.url, done.URL, "alice", "Range", "bytes=13-24")
	if resp.StatusCode != http.StatusPartialContent || string(b) != string(text[13:25]) {
		t.Fatalf("range GET: %d %q", resp.StatusCode, b)
	}
	resp, _ = get(t, e.url, done.URL+"?download=1", "alice")
	if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("download disposition %q", resp.Header.Get("Content-Disposition"))
	}
	// Bob: 404 everywhere, as for things that do not exist.
	for _, p := range []string{done.URL, "/v1/sessions/" + sid + "/files"} {
		if resp, _ := get(t, e.url, p, "bob"); resp.StatusCode != 404 {
			t.Fatalf("bob GET %s: %d", p, resp.StatusCode)
		}
	}
	if resp, _ := get(t, e.url, done.URL, ""); resp.StatusCode != 401 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	_, err = bob.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "b.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	wantCode(t, err, synccore.CodeNotFound)
	// Bob cannot touch alice's upload in progress either.
	sid2 := session(t, alice)
	cut := &http.Client{Transport: failAfter{}}
	half := api(e.url, "alice")
	half.HTTPClient = cut
	_, _ = half.Upload(ctxOf(t), sid2, bindings.UploadFile{Name: "c.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text)),
		Retries: 1, Started: func(u string) { uploadURL = u }})
	if uploadURL == "" {
		t.Fatal("no upload URL")
	}
	_, err = bob.Upload(ctxOf(t), sid2, bindings.UploadFile{URL: uploadURL, Name: "c.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	wantCode(t, err, synccore.CodeNotFound)
	finished, err := alice.Upload(ctxOf(t), sid2, bindings.UploadFile{URL: uploadURL, Name: "c.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	if err != nil || finished.BlobID != hexSum(text) {
		t.Fatalf("alice resumes her upload: %+v, %v", finished, err)
	}

	// A signed URL: no token needed until it expires.
	var signed struct {
		URL       string `json:"url"`
		ExpiresAt int64  `json:"expires_at"`
	}
	req, _ := http.NewRequestWithContext(ctxOf(t), http.MethodPost, e.url+done.URL+"/sign?ttl=1", nil)
	req.Header.Set("Authorization", "Bearer alice")
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(sresp.Body).Decode(&signed); err != nil || sresp.StatusCode != 200 {
		t.Fatalf("sign: %d %v", sresp.StatusCode, err)
	}
	sresp.Body.Close()
	if resp, b := get(t, e.url, signed.URL, ""); resp.StatusCode != 200 || !bytes.Equal(b, text) {
		t.Fatalf("signed GET: %d", resp.StatusCode)
	}
	if resp, _ := get(t, e.url, strings.Replace(signed.URL, sid, sid2, 1), ""); resp.StatusCode != 403 {
		t.Fatalf("signature of another session's path: %d", resp.StatusCode)
	}
	// Wait (bounded) for the expiry, then the same URL is refused.
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, b := get(t, e.url, signed.URL, "")
		if resp.StatusCode == 403 {
			var te synccore.Error
			if json.Unmarshal(b, &te) != nil || te.Code != synccore.CodeForbidden || !strings.Contains(te.Message, "expired") {
				t.Fatalf("expired answer %s", b)
			}
			break
		}
		if resp.StatusCode != 200 || time.Now().After(deadline) {
			t.Fatalf("signed URL still answers %d at %s (expires %d)", resp.StatusCode, time.Now(), signed.ExpiresAt)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failAfter is a transport whose PATCH requests fail after sending a
// little: an upload left in progress.
type failAfter struct{}

func (failAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch {
		return nil, errors.New("cut")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestDeleteReleases: deleting a session removes its files, and the blob
// when no other session references it; a session sharing the blob (a
// fork's Share) keeps it.
func TestDeleteReleases(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	alice := api(e.url, "alice")
	s1, s2, s3 := session(t, alice), session(t, alice), session(t, alice)
	shared, own := []byte("shared bytes"), []byte("own bytes")
	up := func(sid string, b []byte) bindings.File {
		f, err := alice.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "f.txt", MediaType: "text/plain", Body: bytes.NewReader(b), Size: int64(len(b))})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := up(s1, shared)
	up(s2, shared)
	b := up(s1, own)
	if err := e.blobs.Share(ctxOf(t), s1, s3); err != nil { // as a fork of s1 will
		t.Fatal(err)
	}
	if err := alice.DeleteSession(ctxOf(t), s1); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, e.url, a.URL, "alice"); resp.StatusCode != 404 {
		t.Fatalf("deleted session's file: %d", resp.StatusCode)
	}
	for _, sid := range []string{s2, s3} {
		if resp, got := get(t, e.url, server.FilePath(sid, a.BlobID), "alice"); resp.StatusCode != 200 || !bytes.Equal(got, shared) {
			t.Fatalf("session %s lost the shared file: %d", sid, resp.StatusCode)
		}
	}
	if resp, _ := get(t, e.url, server.FilePath(s3, b.BlobID), "alice"); resp.StatusCode != 200 {
		t.Fatalf("the fork lost its own reference: %d", resp.StatusCode)
	}
	for _, sid := range []string{s2, s3} {
		if err := alice.DeleteSession(ctxOf(t), sid); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{a.BlobID, b.BlobID} {
		if _, err := e.blobs.Open(ctxOf(t), id); err == nil {
			t.Fatalf("blob %s outlived every session", id)
		}
	}
}

// TestSendFiles: the Go host uploads, then posts the message with the
// file parts.
func TestSendFiles(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	alice := api(e.url, "alice")
	sid := session(t, alice)
	png := append([]byte("\x89PNG\r\n\x1a\n"), data(4000, 3)...)
	m, err := alice.SendFiles(ctxOf(t), sid, []synccore.Part{{PartID: "t", Type: synccore.PartText, Text: "look"}},
		[]bindings.UploadFile{{Name: "shot.png", MediaType: "image/png", Body: bytes.NewReader(png), Size: int64(len(png))}}, bindings.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 2 || m.Parts[1].Type != synccore.PartFile || m.Parts[1].URL != server.FilePath(sid, hexSum(png)) ||
		m.Parts[1].MediaType != "image/png" || m.Parts[1].Filename != "shot.png" {
		t.Fatalf("message parts %+v", m.Parts)
	}
	resp, b := get(t, e.url, m.Parts[1].URL, "alice")
	if resp.StatusCode != 200 || !bytes.Equal(b, png) || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("GET the image: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// A file part naming a file of another session, or none, is refused;
	// URLs elsewhere pass.
	other := session(t, alice)
	for _, u := range []string{m.Parts[1].URL, server.FilePath(other, hexSum([]byte("nothing"))), "/v1/sessions/" + other + "/files/x"} {
		_, err := alice.Send(ctxOf(t), other, synccore.Part{Type: synccore.PartFile, URL: u, MediaType: "image/png"})
		wantCode(t, err, synccore.CodeInvalidPart)
	}
	if _, err := alice.Send(ctxOf(t), other, synccore.Part{Type: synccore.PartFile, URL: "https://example.com/a.png", MediaType: "image/png"}); err != nil {
		t.Fatalf("an outside URL: %v", err)
	}
}

// TestSweep: an upload left unfinished is dropped once it is older than
// the bound, and its URL is gone; a fresh one stays.
func TestSweep(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	alice := api(e.url, "alice")
	sid := session(t, alice)
	text := []byte("left behind")
	half := api(e.url, "alice")
	half.HTTPClient = &http.Client{Transport: failAfter{}}
	var u string
	_, _ = half.Upload(ctxOf(t), sid, bindings.UploadFile{Name: "l.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text)),
		Retries: 1, Started: func(s string) { u = s }})
	if len(dirFiles(t, e.upDir)) == 0 {
		t.Fatal("no upload in progress")
	}
	if n, err := e.up.Sweep(ctxOf(t), time.Hour); err != nil || n != 0 {
		t.Fatalf("Sweep(1h) dropped %d (%v), want 0", n, err)
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, name := range dirFiles(t, e.upDir) {
		if err := os.Chtimes(filepath.Join(e.upDir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := e.up.Sweep(ctxOf(t), time.Hour); err != nil || n != 1 {
		t.Fatalf("Sweep dropped %d (%v), want 1", n, err)
	}
	if left := dirFiles(t, e.upDir); len(left) != 0 {
		t.Fatalf("sweep left %v", left)
	}
	_, err := alice.Upload(ctxOf(t), sid, bindings.UploadFile{URL: u, Name: "l.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	wantCode(t, err, synccore.CodeNotFound)
}

// TestMembersUpload: an editor of alice's session uploads a file into it,
// as it may post; a viewer is refused 403 and a stranger 404 at creation,
// with nothing stored; a removed editor no longer can; a write link can,
// a read link not.
func TestMembersUpload(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	alice := api(e.url, "alice")
	sid := session(t, alice)
	for who, role := range map[string]string{"bob": "editor", "carol": "viewer"} {
		if _, err := alice.SetMember(ctxOf(t), sid, who, role); err != nil {
			t.Fatal(err)
		}
	}
	text := []byte("notes of the meeting")
	up := func(who string) (bindings.File, error) {
		return api(e.url, who).Upload(ctxOf(t), sid, bindings.UploadFile{Name: "notes.txt", MediaType: "text/plain", Body: bytes.NewReader(text), Size: int64(len(text))})
	}
	done, err := up("bob")
	if err != nil {
		t.Fatalf("the editor's upload: %v", err)
	}
	if done.BlobID != hexSum(text) {
		t.Fatalf("the editor's file %+v", done)
	}
	_, err = up("carol")
	wantCode(t, err, synccore.CodeForbidden)
	_, err = up("dave")
	wantCode(t, err, synccore.CodeNotFound)
	if err := alice.RemoveMember(ctxOf(t), sid, "bob"); err != nil {
		t.Fatal(err)
	}
	_, err = up("bob")
	wantCode(t, err, synccore.CodeNotFound)
	// A write link uploads into its session as an editor does; a read
	// link may not.
	for mode, want := range map[string]string{"write": "", "read": synccore.CodeForbidden} {
		sh, err := alice.CreateShare(ctxOf(t), sid, bindings.ShareOptions{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		other := []byte("from a " + mode + " link")
		_, err = api(e.url, sh.Token).Upload(ctxOf(t), sid, bindings.UploadFile{Name: mode + ".txt", MediaType: "text/plain", Body: bytes.NewReader(other), Size: int64(len(other))})
		if want == "" && err != nil {
			t.Fatalf("the write link's upload: %v", err)
		}
		if want != "" {
			wantCode(t, err, want)
		}
	}
	if refs, err := e.blobs.Refs(ctxOf(t), sid); err != nil || len(refs) != 2 {
		t.Fatalf("the session's files: %+v, %v; want the editor's and the write link's", refs, err)
	}
	if left := dirFiles(t, e.upDir); len(left) != 0 {
		t.Fatalf("refused uploads stored %v", left)
	}
}
