// Package uploads serves resumable uploads with the tus protocol
// (https://tus.io/protocols/resumable-upload, through tusd) for the
// reference server: mount it as server.Attachments.Uploads, and the
// server authorizes every request before it reaches this handler.
//
// An upload belongs to the principal that created it and to a session
// that principal may write to, as its owner or an editor (Upload-Metadata
// session_id; server.MayWrite); its size is bounded
// (MaxSize, 100 MB by default) and its media type must be one of
// MediaTypes: both are checked when the upload is created, before any byte
// is stored. A cut upload resumes from the offset HEAD reports. When its
// last byte arrives, the bytes become a blob of the session
// (blob.Store.Put) and the final PATCH answers the blob's id and the
// file's URL in the Agentsync-Blob-Id and Agentsync-File-Url headers.
// Every refusal is a typed {code, message} body (docs/files.md).
//
// The bytes of an upload in progress are in Config.Store: by default
// files under Config.Dir on this node, locked in this process (one node);
// in a cluster, a pgupload.Store, in the nodes' PostgreSQL, so that any
// node serves any request of any upload (no sticky routing). Finished
// files live in the blob store.
package uploads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/synccore"
	tusd "github.com/tus/tusd/v2/pkg/handler"
	xslog "golang.org/x/exp/slog"
)

// DefaultMaxSize bounds an upload when Config.MaxSize is zero.
const DefaultMaxSize = 100 << 20

// DefaultMediaTypes are the media types accepted when Config.MediaTypes is
// nil: images, PDF and text the models read.
var DefaultMediaTypes = []string{
	"image/png", "image/jpeg", "image/gif", "image/webp",
	"application/pdf",
	"text/plain", "text/markdown", "text/csv", "application/json",
}

// Config configures a Handler.
type Config struct {
	// Blobs receives the finished uploads. Required.
	Blobs blob.Store
	// Store keeps the uploads in progress; nil: a DirStore under Dir.
	// Several nodes share a pgupload.Store.
	Store Store
	// Dir keeps the uploads in progress (created if needed) when Store
	// is nil.
	Dir string
	// MaxSize bounds one upload in bytes; zero means DefaultMaxSize.
	MaxSize int64
	// MediaTypes are the accepted media types, "type/subtype" or
	// "type/*"; nil means DefaultMediaTypes.
	MediaTypes []string
	// BasePath is where the server serves the routes, as the client sees
	// it: "/v1/uploads/" unless the server is mounted under a prefix
	// ("/agent/v1/uploads/"). Upload URLs (Location) are made from it.
	BasePath string
	// Logger receives the handler's logs; nil discards them.
	Logger *slog.Logger
}

// Handler serves the upload routes.
type Handler struct {
	tus     *tusd.Handler
	store   Store
	cfg     Config
	log     *slog.Logger
	route   string // the server's own route prefix, "/v1/uploads"
	allowed []string
}

// Metadata keys of an upload (Upload-Metadata). The client sends
// session_id, filename and filetype (tus-js-client's names); the server
// keeps principal itself.
const (
	MetaSession   = "session_id"
	MetaFilename  = "filename"
	MetaFiletype  = "filetype"
	metaPrincipal = "principal"
)

// New returns the handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Blobs == nil || (cfg.Store == nil && cfg.Dir == "") {
		return nil, errors.New("uploads: Config needs Blobs, and a Store or Dir")
	}
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = DefaultMaxSize
	}
	if cfg.MediaTypes == nil {
		cfg.MediaTypes = DefaultMediaTypes
	}
	if cfg.BasePath == "" {
		cfg.BasePath = "/v1/uploads/"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Store == nil {
		d, err := NewDirStore(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("uploads: %w", err)
		}
		cfg.Store = d
	}
	h := &Handler{store: cfg.Store, cfg: cfg, log: cfg.Logger, route: "/v1/uploads"}
	for _, t := range cfg.MediaTypes {
		h.allowed = append(h.allowed, strings.ToLower(strings.TrimSpace(t)))
	}
	composer := tusd.NewStoreComposer()
	composer.UseCore(h.store)
	composer.UseTerminater(h.store)
	composer.UseLocker(h.store)
	tus, err := tusd.NewHandler(tusd.Config{
		StoreComposer:             composer,
		BasePath:                  cfg.BasePath,
		MaxSize:                   cfg.MaxSize,
		DisableDownload:           true,
		DisableConcatenation:      true,
		Cors:                      &tusd.CorsConfig{Disable: true}, // the server's CORS
		Logger:                    xslog.New(xslog.NewTextHandler(io.Discard, nil)),
		PreUploadCreateCallback:   h.preCreate,
		PreFinishResponseCallback: h.preFinish,
	})
	if err != nil {
		return nil, fmt.Errorf("uploads: %w", err)
	}
	h.tus = tus
	return h, nil
}

type principalKey struct{}

// uploadID is the shape of tusd's ids: hex.
var uploadID = regexp.MustCompile(`^[0-9a-zA-Z]{1,64}$`)

// ServeHTTP serves POST /v1/uploads (create) and HEAD, PATCH, DELETE
// /v1/uploads/{upload}, for the request's principal only: another
// principal's upload is 404, as an unknown one.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tw := &typedWriter{ResponseWriter: w, head: r.Method == http.MethodHead, maxSize: h.cfg.MaxSize}
	defer tw.finish()
	p := server.Principal(r)
	rest, ok := strings.CutPrefix(r.URL.Path, h.route)
	if !ok {
		tw.fail(synccore.Errorf(synccore.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
		return
	}
	id := strings.Trim(rest, "/")
	if id != "" {
		if !uploadID.MatchString(id) || !h.owns(r.Context(), id, p) {
			tw.fail(synccore.Errorf(synccore.CodeNotFound, "upload %q not found", id))
			return
		}
	}
	r2 := r.Clone(context.WithValue(r.Context(), principalKey{}, p))
	r2.URL.Path = "/" + id
	r2.URL.RawPath = ""
	h.tus.ServeHTTP(tw, r2)
}

func (h *Handler) owns(ctx context.Context, id, p string) bool {
	up, err := h.store.GetUpload(ctx, id)
	if err != nil {
		return false
	}
	info, err := up.GetInfo(ctx)
	return err == nil && info.MetaData[metaPrincipal] == p
}

// typedErr is a tusd error whose answer is the typed {code, message} body.
func typedErr(err error) tusd.Error {
	te, ok := err.(*synccore.Error)
	if !ok {
		var t *synccore.Error
		if errors.As(err, &t) {
			te = t
		} else {
			te = synccore.Errorf(synccore.CodeInternal, "internal error")
		}
	}
	body, _ := json.Marshal(te)
	return tusd.Error{
		ErrorCode: te.Code,
		Message:   te.Message,
		HTTPResponse: tusd.HTTPResponse{
			StatusCode: wire.HTTPStatus(te.Code),
			Body:       string(body),
			Header:     tusd.HTTPHeader{"Content-Type": "application/json"},
		},
	}
}

// preCreate admits an upload: its length is declared and within MaxSize
// (tusd checked that already), its session is the principal's, its media
// type allowed. It keeps only the metadata the server uses.
func (h *Handler) preCreate(ev tusd.HookEvent) (tusd.HTTPResponse, tusd.FileInfoChanges, error) {
	info := ev.Upload
	p, _ := ev.Context.Value(principalKey{}).(string)
	if info.SizeIsDeferred {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, typedErr(synccore.Errorf(synccore.CodeBadRequest, "an upload needs its Upload-Length"))
	}
	if info.Size > h.cfg.MaxSize {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, typedErr(blob.ErrTooLarge(h.cfg.MaxSize))
	}
	sid := info.MetaData[MetaSession]
	if sid == "" {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, typedErr(synccore.Errorf(synccore.CodeBadRequest, "Upload-Metadata needs %s", MetaSession))
	}
	if err := h.checkSession(ev.Context, sid); err != nil {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, typedErr(err)
	}
	name := cleanName(info.MetaData[MetaFilename])
	mt, err := h.mediaType(info.MetaData[MetaFiletype], name)
	if err != nil {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, typedErr(err)
	}
	return tusd.HTTPResponse{}, tusd.FileInfoChanges{MetaData: tusd.MetaData{
		MetaSession: sid, MetaFilename: name, MetaFiletype: mt, metaPrincipal: p,
	}}, nil
}

// checkSession refuses a session the request's principal may not write
// to (server.MayWrite: its owner and editors may): a stranger's as an
// unknown one, a viewer's 403.
func (h *Handler) checkSession(ctx context.Context, sid string) error {
	return server.MayWrite(ctx, sid)
}

// mediaType is the upload's declared type (else the file name's), if
// allowed: forbidden otherwise.
func (h *Handler) mediaType(declared, name string) (string, error) {
	if declared == "" {
		declared = mime.TypeByExtension(path.Ext(name))
	}
	base, params, err := mime.ParseMediaType(declared)
	if err != nil || declared == "" {
		return "", synccore.Errorf(synccore.CodeForbidden, "an upload needs a media type (Upload-Metadata filetype)")
	}
	for _, a := range h.allowed {
		if a == base || (strings.HasSuffix(a, "/*") && strings.HasPrefix(base, strings.TrimSuffix(a, "*"))) {
			if cs, ok := params["charset"]; ok {
				return mime.FormatMediaType(base, map[string]string{"charset": cs}), nil
			}
			return base, nil
		}
	}
	return "", synccore.Errorf(synccore.CodeForbidden, "media type %q is not accepted", base)
}

// cleanName keeps a file name's last element, without control characters,
// at most 255 bytes.
func cleanName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" {
		return ""
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	for len(name) > 255 {
		_, n := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-n]
	}
	return name
}

// sniffed are the declared types whose bytes must look like them (what a
// browser or a model would take them for).
var sniffed = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "application/pdf": true}

// preFinish turns a finished upload into a blob of its session and drops
// the upload; the final PATCH answers the file's id and URL.
func (h *Handler) preFinish(ev tusd.HookEvent) (tusd.HTTPResponse, error) {
	ctx := ev.Context
	info := ev.Upload
	sid, mt := info.MetaData[MetaSession], info.MetaData[MetaFiletype]
	up, err := h.store.GetUpload(ctx, info.ID)
	if err != nil {
		return tusd.HTTPResponse{}, err
	}
	drop := func() {
		if err := h.store.AsTerminatableUpload(up).Terminate(context.WithoutCancel(ctx)); err != nil {
			h.log.Warn("drop a finished upload", "upload", info.ID, "err", err)
		}
	}
	rd, err := up.GetReader(ctx)
	if err != nil {
		return tusd.HTTPResponse{}, err
	}
	defer rd.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(rd, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tusd.HTTPResponse{}, err
	}
	head = head[:n]
	if base, _, _ := mime.ParseMediaType(mt); sniffed[base] {
		if got, _, _ := mime.ParseMediaType(http.DetectContentType(head)); got != base {
			drop()
			return tusd.HTTPResponse{}, typedErr(synccore.Errorf(synccore.CodeForbidden, "the bytes are not %s (they look like %s)", base, got))
		}
	}
	if err := h.checkSession(ctx, sid); err != nil {
		drop()
		return tusd.HTTPResponse{}, typedErr(err)
	}
	ref, err := h.cfg.Blobs.Put(ctx, blob.Ref{SessionID: sid, Filename: info.MetaData[MetaFilename], MediaType: mt},
		io.MultiReader(strings.NewReader(string(head)), rd), h.cfg.MaxSize)
	if err != nil {
		return tusd.HTTPResponse{}, typedErr(err)
	}
	// A session deleted meanwhile released its references before this
	// one: release again, so the blob does not outlive it.
	if err := h.checkSession(ctx, sid); err != nil {
		_ = h.cfg.Blobs.Release(context.WithoutCancel(ctx), sid)
		drop()
		return tusd.HTTPResponse{}, typedErr(err)
	}
	drop()
	h.log.Info("upload finished", "session", sid, "blob", ref.BlobID, "size", ref.Size, "media_type", mt)
	return tusd.HTTPResponse{Header: tusd.HTTPHeader{
		"Agentsync-Blob-Id":  ref.BlobID,
		"Agentsync-File-Url": server.FilePath(sid, ref.BlobID),
	}}, nil
}
