package web

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"testing"
)

// TestVendoredLibraries: every vendored file is embedded with the SHA-256
// its manifest records, and the manifest's versions are the ones pinned in
// vendor-src/package.json (make vendor-web-check compares the bytes with
// the packages themselves; this runs without npm).
func TestVendoredLibraries(t *testing.T) {
	var manifest struct {
		Packages map[string]string `json:"packages"`
		Files    map[string]struct {
			Package string `json:"package"`
			SHA256  string `json:"sha256"`
		} `json:"files"`
	}
	raw, err := fs.ReadFile(Static, "vendor/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	var pinned struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err = os.ReadFile("vendor-src/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pinned); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Packages) != len(pinned.Dependencies) {
		t.Fatalf("manifest packages %v, pinned %v", manifest.Packages, pinned.Dependencies)
	}
	for name, version := range pinned.Dependencies {
		if manifest.Packages[name] != version {
			t.Errorf("%s: vendored %q, pinned %q (run make vendor-web)", name, manifest.Packages[name], version)
		}
	}
	for _, name := range []string{"marked.esm.js", "purify.es.mjs", "highlight.min.js"} {
		if _, ok := manifest.Files[name]; !ok {
			t.Errorf("%s is not vendored", name)
		}
	}
	for name, f := range manifest.Files {
		data, err := fs.ReadFile(Static, "vendor/"+name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Errorf("%s: SHA-256 differs from the manifest (edited by hand? run make vendor-web)", name)
		}
	}
}
