// Package web is the reference server's live demo page and the hosting of
// the browser package: plain ES modules and CSS, no build step. An app
// that wants them sets server.Config.Files to Handler(), which serves the
// page at "/" and the JavaScript host package at "/js/" (with the client
// core module at "/js/agentsync.wasm"), so the page imports
// "/js/index.js". An app that does not import this package links none of
// it (the page, the scripts, the module's bytes).
//
// Third-party browser code (marked, DOMPurify, highlight.js) lives in
// static/vendor/, copied from the packages pinned in vendor-src/ by
// `make vendor-web` and checked byte for byte by `make test`.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"time"

	agentsyncjs "github.com/agentsync/agentsync/js"
	"github.com/agentsync/agentsync/wasm/module"
)

//go:embed static
var files embed.FS

// Static is the demo page's file tree, rooted at static/ (index.html,
// app.js, style.css...), ready for http.FileServerFS.
var Static fs.FS = mustSub(files, "static")

// Handler serves the demo page and the browser package: GET (and HEAD)
// "/js/agentsync.wasm" is the client core module (application/wasm, with
// an ETag), "/js/..." the host package's scripts (js.Files), and every
// other path a file of Static. Mounted as server.Config.Files, it gets
// the server's CORS headers for its allowed origins, so an app on another
// origin (Vite on :5173) may import the scripts and fetch the module.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /js/agentsync.wasm", serveWASM(module.Wasm))
	mux.Handle("GET /js/", http.StripPrefix("/js/", http.FileServerFS(agentsyncjs.Files)))
	mux.Handle("GET /", http.FileServerFS(Static))
	return mux
}

// serveWASM serves the module with the media type that
// WebAssembly.instantiateStreaming requires, and an ETag so a reload does
// not download it again.
func serveWASM(module []byte) http.HandlerFunc {
	sum := sha256.Sum256(module)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "agentsync.wasm", time.Time{}, bytes.NewReader(module))
	}
}

// mustSub roots fsys at dir. The directory is embedded at build time, so a
// failure here is a programming error caught by the package's tests.
func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic("web: embedded " + dir + " missing: " + err.Error())
	}
	return sub
}
