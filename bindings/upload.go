package bindings

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// UploadFile is one file to upload (API.Upload).
type UploadFile struct {
	// Name is the file name the session shows; MediaType its type (say
	// "image/png"), which the server checks against what it accepts.
	Name, MediaType string
	// Body is read at any offset, so a cut upload resumes from where the
	// server says it stopped (an *os.File, a bytes.Reader); Size is its
	// length.
	Body io.ReaderAt
	Size int64
	// Progress, if set, is called with the bytes the server has and the
	// size, after each chunk of writing and at each resume.
	Progress func(sent, total int64)
	// URL resumes an upload this or another process started (the
	// Uploaded.UploadURL it reported through Started); "" starts a new one.
	URL string
	// Started, if set, is called with the upload's URL once it exists,
	// for a caller that keeps it to resume after a restart.
	Started func(uploadURL string)
	// Retries bounds the attempts in a row that move no byte (0: 8).
	Retries int
}

// File is a finished upload: a file of its session.
type File struct {
	BlobID    string // hex SHA-256 of the bytes
	URL       string // the file's path under the server's root
	Filename  string
	MediaType string
	Size      int64
}

// Part is the user file part that refers to f.
func (f File) Part(partID string) synccore.Part {
	return synccore.Part{PartID: partID, Type: synccore.PartFile, URL: f.URL, MediaType: f.MediaType, Filename: f.Filename}
}

const tusVersion = "1.0.0"

// Upload uploads f to a session with the tus protocol (docs/files.md): it
// creates the upload, PATCHes the bytes, and after a network failure or
// an offset conflict asks the server's offset (HEAD) and goes on from
// there, so no byte the server has is sent twice. The server's refusals
// are *synccore.Error: too_large past its bound, forbidden for a media
// type it does not accept, not_found for a session the caller cannot use.
func (a *API) Upload(ctx context.Context, sessionID string, f UploadFile) (File, error) {
	retries := f.Retries
	if retries <= 0 {
		retries = 8
	}
	loc := f.URL
	if loc == "" {
		var err error
		if loc, err = a.createUpload(ctx, sessionID, f); err != nil {
			return File{}, err
		}
	}
	if f.Started != nil {
		f.Started(loc)
	}
	off := int64(-1) // unknown: ask
	if f.URL == "" {
		off = 0
	}
	var lastErr error
	for failures := 0; failures < retries; {
		if off < 0 {
			got, err := a.uploadOffset(ctx, loc)
			if err != nil {
				if !retryable(err) {
					return File{}, err
				}
				failures++
				lastErr = err
				if err := sleepCtx(ctx, backoffDelay(failures)); err != nil {
					return File{}, err
				}
				continue
			}
			off = got
			if f.Progress != nil {
				f.Progress(off, f.Size)
			}
		}
		file, newOff, err := a.patchUpload(ctx, loc, f, off)
		if err == nil {
			file.Filename, file.MediaType, file.Size = cleanOr(file.Filename, f.Name), f.MediaType, f.Size
			return file, nil
		}
		if !retryable(err) {
			return File{}, err
		}
		if newOff <= off {
			failures++
		} else {
			failures = 0
		}
		lastErr = err
		off = -1
		if err := sleepCtx(ctx, backoffDelay(failures)); err != nil {
			return File{}, err
		}
	}
	return File{}, fmt.Errorf("bindings: upload %s: gave up after %d attempts without progress: %w", f.Name, retries, lastErr)
}

func cleanOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// retryable: a network failure, an offset conflict (409), a locked upload
// (423), a rate limit or a draining server.
func retryable(err error) bool {
	var te *NetworkError
	if errors.As(err, &te) {
		return true
	}
	var se *synccore.Error
	if errors.As(err, &se) {
		switch se.Code {
		case synccore.CodeConflict, synccore.CodeRateLimited, synccore.CodeClosed:
			return true
		}
	}
	return false
}

func backoffDelay(failures int) time.Duration {
	d := 50 * time.Millisecond << min(failures, 6)
	return min(d, 2*time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (a *API) tusRequest(ctx context.Context, method, u string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("bindings: %s %s: %w", method, u, err)
	}
	req.Header.Set("Tus-Resumable", tusVersion)
	if a.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	return req, nil
}

func (a *API) client() *http.Client {
	if a.HTTPClient != nil {
		return a.HTTPClient
	}
	return http.DefaultClient
}

// send runs req and turns a non-2xx answer into the server's typed error.
func (a *API) send(req *http.Request) (*http.Response, error) {
	resp, err := a.client().Do(req)
	if err != nil {
		return nil, &NetworkError{fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, serverError(resp, data)
	}
	return resp, nil
}

func metadata(kv map[string]string) string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" "+base64.StdEncoding.EncodeToString([]byte(kv[k])))
	}
	return strings.Join(parts, ",")
}

func (a *API) createUpload(ctx context.Context, sessionID string, f UploadFile) (string, error) {
	u := strings.TrimRight(a.BaseURL, "/") + "/v1/uploads"
	req, err := a.tusRequest(ctx, http.MethodPost, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Upload-Length", strconv.FormatInt(f.Size, 10))
	req.Header.Set("Upload-Metadata", metadata(map[string]string{"session_id": sessionID, "filename": f.Name, "filetype": f.MediaType}))
	resp, err := a.send(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc, err := req.URL.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return "", synccore.Errorf(synccore.CodeMalformed, "upload created without a Location")
	}
	return loc.String(), nil
}

func (a *API) uploadOffset(ctx context.Context, loc string) (int64, error) {
	req, err := a.tusRequest(ctx, http.MethodHead, loc, nil)
	if err != nil {
		return 0, err
	}
	resp, err := a.send(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	off, err := strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	if err != nil {
		return 0, synccore.Errorf(synccore.CodeMalformed, "HEAD %s: bad Upload-Offset", loc)
	}
	return off, nil
}

// countingReader counts the bytes the request body handed out.
type countingReader struct {
	r        io.Reader
	n        atomic.Int64
	base     int64
	total    int64
	progress func(sent, total int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	sent := c.n.Add(int64(n))
	if c.progress != nil && n > 0 {
		c.progress(c.base+sent, c.total)
	}
	return n, err
}

// patchUpload sends the bytes from off; newOff is what the answer (or a
// guess from the bytes sent, on failure) says the server holds.
func (a *API) patchUpload(ctx context.Context, loc string, f UploadFile, off int64) (File, int64, error) {
	body := &countingReader{r: io.NewSectionReader(f.Body, off, f.Size-off), base: off, total: f.Size, progress: f.Progress}
	req, err := a.tusRequest(ctx, http.MethodPatch, loc, body)
	if err != nil {
		return File{}, off, err
	}
	req.ContentLength = f.Size - off
	req.Header.Set("Content-Type", "application/offset+octet-stream")
	req.Header.Set("Upload-Offset", strconv.FormatInt(off, 10))
	resp, err := a.send(req)
	if err != nil {
		return File{}, off + body.n.Load(), err
	}
	resp.Body.Close()
	got, err := strconv.ParseInt(resp.Header.Get("Upload-Offset"), 10, 64)
	if err != nil || got != f.Size {
		return File{}, got, &NetworkError{fmt.Errorf("PATCH %s: offset %s of %d", loc, resp.Header.Get("Upload-Offset"), f.Size)}
	}
	file := File{BlobID: resp.Header.Get("Agentsync-Blob-Id"), URL: resp.Header.Get("Agentsync-File-Url")}
	if file.BlobID == "" || file.URL == "" {
		return File{}, got, synccore.Errorf(synccore.CodeMalformed, "PATCH %s: finished without Agentsync-Blob-Id and Agentsync-File-Url", loc)
	}
	return file, got, nil
}

// FileURL is the absolute URL of a file path the server answered.
func (a *API) FileURL(path string) string {
	if u, err := url.Parse(path); err == nil && u.IsAbs() {
		return path
	}
	return strings.TrimRight(a.BaseURL, "/") + path
}

// SendFiles uploads files (one after another, each resumable as Upload)
// and then posts one user message: parts, then a file part for each file
// in order (part ids "file-1", "file-2", ... unless taken). Nothing is
// posted unless every upload finished; the files already uploaded stay
// in the session (a retry re-uses their blobs: same bytes, same id).
func (a *API) SendFiles(ctx context.Context, sessionID string, parts []synccore.Part, files []UploadFile, opts SendOptions) (synccore.Message, error) {
	taken := map[string]bool{}
	for _, p := range parts {
		taken[p.PartID] = true
	}
	all := append([]synccore.Part(nil), parts...)
	for i, f := range files {
		done, err := a.Upload(ctx, sessionID, f)
		if err != nil {
			return synccore.Message{}, err
		}
		id := "file-" + strconv.Itoa(i+1)
		for taken[id] {
			id += "x"
		}
		taken[id] = true
		all = append(all, done.Part(id))
	}
	return a.SendWith(ctx, sessionID, all, opts)
}
