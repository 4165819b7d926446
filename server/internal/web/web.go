// Package web holds the live demo page of the reference server: plain ES
// modules and CSS, no build step. The server mounts Static at "/" and the
// JavaScript host package at "/js/", so the page imports "/js/index.js".
// Third-party browser code (marked, DOMPurify, highlight.js) lives in
// static/vendor/, copied from the packages pinned in vendor-src/ by
// `make vendor-web` and checked byte for byte by `make test`.
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var files embed.FS

// Static is the demo page's file tree, rooted at static/ (index.html,
// app.js, style.css...), ready for http.FileServerFS.
var Static fs.FS = mustSub(files, "static")

// mustSub roots fsys at dir. The directory is embedded at build time, so a
// failure here is a programming error caught by the package's tests.
func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic("web: embedded " + dir + " missing: " + err.Error())
	}
	return sub
}
