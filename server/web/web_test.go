package web

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The page is plain ES modules with no build step, so a typo in an import
// path would only show in a browser. This test resolves every relative
// import of every module against the embedded tree instead.
var importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}/[^'"]+)['"]`)

func TestStaticHasThePage(t *testing.T) {
	for _, name := range []string{"index.html", "app.js", "style.css"} {
		b, err := fs.ReadFile(Static, name)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty", name)
		}
	}
	html, _ := fs.ReadFile(Static, "index.html")
	for _, ref := range []string{`src="app.js"`, `href="style.css"`, `data-testid="new-session"`, `data-testid="drop-connection"`, `data-testid="status"`} {
		if !strings.Contains(string(html), ref) {
			t.Errorf("index.html lacks %s", ref)
		}
	}
}

func TestRelativeImportsResolve(t *testing.T) {
	mods, err := fs.Glob(Static, "*.js")
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 2 {
		t.Fatalf("found %d modules, want the page's modules", len(mods))
	}
	for _, mod := range mods {
		src, err := fs.ReadFile(Static, mod)
		if err != nil {
			t.Fatalf("read %s: %v", mod, err)
		}
		for _, m := range importRE.FindAllStringSubmatch(string(src), -1) {
			target := strings.TrimPrefix(m[1], "./")
			if strings.HasPrefix(target, "../") {
				t.Errorf("%s imports %s outside the page", mod, m[1])
				continue
			}
			if _, err := fs.Stat(Static, target); err != nil {
				t.Errorf("%s imports %s: %v", mod, m[1], err)
			}
		}
	}
}

// The server mounts Static with the standard file server; check the files
// come out with the content types browsers need for modules.
func TestServedWithModuleTypes(t *testing.T) {
	srv := httptest.NewServer(http.FileServerFS(Static))
	defer srv.Close()
	for path, want := range map[string]string{"/": "text/html", "/app.js": "javascript", "/style.css": "text/css"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, res.StatusCode)
		}
		if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, want) {
			t.Errorf("GET %s: Content-Type %q, want %s", path, ct, want)
		}
	}
}

// TestHandlerServesThePackage: Handler serves the page, the host package's
// scripts and the module, each with the type a browser needs.
func TestHandlerServesThePackage(t *testing.T) {
	srv := httptest.NewServer(Handler())
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 10 * time.Second}
	for path, want := range map[string]string{
		"/":                  "text/html",
		"/app.js":            "javascript",
		"/js/index.js":       "javascript",
		"/js/agentsync.wasm": "application/wasm",
	} {
		res, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("GET %s: status %d, %d bytes, %v", path, res.StatusCode, len(body), err)
		}
		if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, want) {
			t.Errorf("GET %s: Content-Type %q, want %s", path, ct, want)
		}
		if path == "/js/agentsync.wasm" && (!bytes.HasPrefix(body, []byte("\x00asm")) || res.Header.Get("ETag") == "") {
			t.Errorf("the module: %d bytes, ETag %q", len(body), res.Header.Get("ETag"))
		}
	}
}
