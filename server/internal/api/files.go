package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/synccore"
)

// Defaults of the signed file URLs (docs/files.md).
const (
	DefaultSignedURLTTL = 5 * time.Minute
	MaxSignedURLTTL     = 24 * time.Hour
)

// FilesConfig configures the file routes: GET/HEAD
// /v1/sessions/{id}/files/{blob}, POST .../files/{blob}/sign, GET
// /v1/sessions/{id}/files, and the upload routes under /v1/uploads.
type FilesConfig struct {
	Blobs blob.Store
	// Uploads serves /v1/uploads and /v1/uploads/...; nil: 404.
	Uploads http.Handler
	// SigningKey signs file URLs; nil: a random key of this process.
	SigningKey []byte
	// SignedURLTTL is the default lifetime of a signed URL; 0: 5 min.
	SignedURLTTL time.Duration
}

type files struct {
	blobs   blob.Store
	uploads http.Handler
	key     []byte
	ttl     time.Duration
}

func newFiles(cfg *FilesConfig) *files {
	if cfg == nil || cfg.Blobs == nil {
		return nil
	}
	f := &files{blobs: cfg.Blobs, uploads: cfg.Uploads, key: cfg.SigningKey, ttl: cfg.SignedURLTTL}
	if len(f.key) == 0 {
		f.key = make([]byte, 32)
		_, _ = rand.Read(f.key)
	}
	if f.ttl <= 0 {
		f.ttl = DefaultSignedURLTTL
	}
	f.ttl = min(f.ttl, MaxSignedURLTTL)
	return f
}

// FilePath is the path, relative to the API's root, of a session's file.
func FilePath(sessionID, blobID string) string { return blob.FilePath(sessionID, blobID) }

// routeFiles adds the file routes to mux (without Files configured, they
// are unknown routes).
func (a *api) routeFiles(mux *http.ServeMux, endpoint func(http.HandlerFunc) http.HandlerFunc) {
	if a.files == nil {
		return
	}
	guarded := endpoint(a.can(levelRead, a.serveFile))
	serve := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("sig") {
			a.serveSigned(w, r)
			return
		}
		guarded(w, r)
	}
	mux.HandleFunc("GET /v1/sessions/{id}/files/{blob}", serve)
	mux.HandleFunc("HEAD /v1/sessions/{id}/files/{blob}", serve)
	mux.HandleFunc("POST /v1/sessions/{id}/files/{blob}/sign", endpoint(a.can(levelRead, a.signFile)))
	mux.HandleFunc("GET /v1/sessions/{id}/files", endpoint(a.can(levelRead, a.listFiles)))
	if a.files.uploads != nil {
		up := endpoint(a.uploads)
		mux.HandleFunc("POST /v1/uploads", up)
		for _, m := range []string{"HEAD", "PATCH", "DELETE"} {
			mux.HandleFunc(m+" /v1/uploads/{upload}", up)
		}
	}
}

// uploads hands an authorized request to the upload handler, which finds
// its principal with Principal and asks MayWrite whether that principal
// may add a file to the session an upload names. Preflights are answered
// by the API.
func (a *api) uploads(w http.ResponseWriter, r *http.Request) {
	check := func(ctx context.Context, sessionID string) error {
		_, err := a.checkAccess(ctx, sessionID, levelWrite)
		return err
	}
	a.files.uploads.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mayWriteKey{}, check)))
}

type mayWriteKey struct{}

// MayWrite says whether the principal of a request the server handed to
// the upload handler (ctx is that request's, or derived from it) may
// write to session id, as posting a message needs: nil for its owner or
// an editor; the typed 404 (a session it has nothing to do with, or none)
// or 403 (a viewer) otherwise.
func MayWrite(ctx context.Context, sessionID string) error {
	check, _ := ctx.Value(mayWriteKey{}).(func(context.Context, string) error)
	if check == nil {
		return synccore.Errorf(synccore.CodeInternal, "MayWrite outside a request the server authorized")
	}
	return check(ctx, sessionID)
}

// Principal is the principal an authorized request acts for (the upload
// handler's way to learn it).
func Principal(r *http.Request) string { return principal(r.Context()) }

// fileBody is one file as GET /v1/sessions/{id}/files lists it.
type fileBody struct {
	BlobID    string `json:"blob_id" msgpack:"blob_id"`
	URL       string `json:"url" msgpack:"url"`
	Filename  string `json:"filename" msgpack:"filename"`
	MediaType string `json:"media_type" msgpack:"media_type"`
	Size      int64  `json:"size" msgpack:"size"`
	CreatedAt int64  `json:"created_at" msgpack:"created_at"`
}

func (a *api) listFiles(w http.ResponseWriter, r *http.Request) {
	refs, err := a.files.blobs.Refs(r.Context(), r.PathValue("id"))
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	out := struct {
		Items []fileBody `json:"items" msgpack:"items"`
	}{Items: make([]fileBody, 0, len(refs))}
	for _, ref := range refs {
		out.Items = append(out.Items, fileBody{ref.BlobID, FilePath(ref.SessionID, ref.BlobID), ref.Filename, ref.MediaType, ref.Size, ref.CreatedAt})
	}
	a.writeValue(w, r, http.StatusOK, out)
}

// checkFileParts refuses a file part whose url names a file of this
// server (a path under /v1/sessions/) that is not a file of the session
// it is posted to: a message never points at bytes its readers cannot
// read. Other URLs (https:, data:) pass as before.
func (a *api) checkFileParts(r *http.Request, sessionID string, parts []synccore.Part) error {
	if a.files == nil {
		return nil
	}
	prefix := "/v1/sessions/" + url.PathEscape(sessionID) + "/files/"
	for _, p := range parts {
		if p.Type != synccore.PartFile || !strings.HasPrefix(p.URL, "/v1/sessions/") {
			continue
		}
		id, ok := strings.CutPrefix(p.URL, prefix)
		if !ok || !blob.ValidID(id) {
			return synccore.Errorf(synccore.CodeInvalidPart, "file part %q: %q is not a file of this session", p.PartID, p.URL)
		}
		if _, err := a.files.blobs.Lookup(r.Context(), sessionID, id); err != nil {
			var te *synccore.Error
			if errors.As(err, &te) && te.Code == synccore.CodeNotFound {
				return synccore.Errorf(synccore.CodeInvalidPart, "file part %q: %q is not a file of this session", p.PartID, p.URL)
			}
			return err
		}
	}
	return nil
}

// signature is the URL-safe HMAC-SHA256 of the session, blob and expiry.
func (f *files) signature(sessionID, blobID string, expires int64) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte(sessionID + "\n" + blobID + "\n" + strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signFile: POST /v1/sessions/{id}/files/{blob}/sign?ttl=<seconds>,
// answers {url, expires_at} (Unix ms), a URL that reads the file without a
// bearer token until then.
func (a *api) signFile(w http.ResponseWriter, r *http.Request) {
	sid, id := r.PathValue("id"), r.PathValue("blob")
	if _, err := a.files.blobs.Lookup(r.Context(), sid, id); err != nil {
		a.writeError(w, r, err)
		return
	}
	ttl := a.files.ttl
	if s := r.URL.Query().Get("ttl"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || time.Duration(n)*time.Second > MaxSignedURLTTL {
			a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "ttl must be 1..%d seconds", int(MaxSignedURLTTL.Seconds())))
			return
		}
		ttl = time.Duration(n) * time.Second
	}
	exp := time.Now().Add(ttl).Unix()
	u := FilePath(sid, id) + "?expires=" + strconv.FormatInt(exp, 10) + "&sig=" + a.files.signature(sid, id, exp)
	a.writeValue(w, r, http.StatusOK, struct {
		URL       string `json:"url" msgpack:"url"`
		ExpiresAt int64  `json:"expires_at" msgpack:"expires_at"`
	}{u, exp * 1000})
}

// serveSigned serves a file by its signed URL, without a bearer token: a
// wrong or expired signature is 403 forbidden.
func (a *api) serveSigned(w http.ResponseWriter, r *http.Request) {
	if !a.origins.allows(r) {
		a.writeError(w, r, synccore.Errorf(synccore.CodeForbidden, "origin %q is not allowed", r.Header.Get("Origin")))
		return
	}
	a.allowOrigin(w, r)
	q := r.URL.Query()
	sid, id := r.PathValue("id"), r.PathValue("blob")
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	want := a.files.signature(sid, id, exp)
	if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(want)) {
		a.writeError(w, r, synccore.Errorf(synccore.CodeForbidden, "the file URL's signature is wrong"))
		return
	}
	if time.Now().Unix() >= exp {
		a.writeError(w, r, synccore.Errorf(synccore.CodeForbidden, "the signed file URL expired"))
		return
	}
	a.serveFile(w, r)
}

// inline are the media types a browser may show in place (images, PDF,
// plain text); every other one is served as an attachment.
var inline = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"application/pdf": true, "text/plain": true,
}

// serveFile: GET/HEAD /v1/sessions/{id}/files/{blob}, with range
// requests, the Content-Type it was uploaded as and a Content-Disposition
// with its file name (inline for images, PDF and plain text; attachment
// otherwise or with ?download=1).
func (a *api) serveFile(w http.ResponseWriter, r *http.Request) {
	sid, id := r.PathValue("id"), r.PathValue("blob")
	ref, err := a.files.blobs.Lookup(r.Context(), sid, id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	rd, err := a.files.blobs.Open(r.Context(), id)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	defer rd.Close()
	h := w.Header()
	mt := ref.MediaType
	if mt == "" {
		mt = "application/octet-stream"
	}
	base, _, _ := mime.ParseMediaType(mt)
	disp := "attachment"
	if inline[base] && r.URL.Query().Get("download") == "" {
		disp = "inline"
	}
	if ref.Filename != "" {
		disp = mime.FormatMediaType(disp, map[string]string{"filename": ref.Filename})
		if disp == "" { // a name mime cannot encode
			disp = "attachment"
		}
	}
	h.Set("Content-Type", mt)
	h.Set("Content-Disposition", disp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("ETag", `"`+id+`"`)
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	http.ServeContent(w, r, "", time.UnixMilli(ref.CreatedAt), rd)
}

// uploadHeaders are the request headers of the tus protocol a browser
// must be allowed to send, and exposeHeaders those it must read.
var (
	uploadHeaders = "Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Defer-Length, Upload-Concat, X-HTTP-Method-Override, X-Requested-With"
	exposeHeaders = strings.Join([]string{"Retry-After", "Location", "Upload-Offset", "Upload-Length", "Upload-Metadata",
		"Tus-Resumable", "Tus-Version", "Tus-Max-Size", "Tus-Extension", "Agentsync-Blob-Id", "Agentsync-File-Url",
		"Content-Range", "Content-Disposition", "Accept-Ranges"}, ", ")
)
