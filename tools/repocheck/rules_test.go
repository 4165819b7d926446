package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ok.go", []byte("package ok\n"))
	write(t, dir, "bin/server", []byte("\x7fELF\x02\x01\x01rest"))
	write(t, dir, "app.exe", []byte("MZ\x90\x00"))
	write(t, dir, "short", []byte("M"))
	big, err := os.Create(filepath.Join(dir, "big.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	write(t, dir, "edge.bin", make([]byte, 16)) // zeros: no magic
	if err := os.Truncate(filepath.Join(dir, "edge.bin"), MaxFileSize); err != nil {
		t.Fatal(err)
	}

	problems := checkFiles(dir, []string{"ok.go", "bin/server", "app.exe", "short", "big.db", "edge.bin", "deleted.txt"})
	got := strings.Join(problems, "\n")
	for _, want := range []string{"bin/server is a compiled executable", "app.exe is a compiled executable", "big.db is 4194305 bytes"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if len(problems) != 3 {
		t.Errorf("want 3 problems (ok.go, short, a file of exactly the bound and a deleted file pass), got %d:\n%s", len(problems), got)
	}
}

func TestCheckVersions(t *testing.T) {
	for _, tc := range []struct {
		changelog, pkg string
		ok             bool
	}{
		{"# Changelog\n\n## v0.2.0 - 2026-12-04\n\n## v0.1.0\n", `{"version":"0.2.0"}`, true},
		{"# Changelog\n\n## [0.2.0]\n", `{"version":"0.2.0"}`, true},
		{"# Changelog\n\n## v0.2.0\n\n## v0.1.0\n", `{"version":"0.1.0"}`, false},
		{"# Changelog\n\nnothing yet\n", `{"version":"0.1.0"}`, false},
		{"## v1.0.0\n", `not json`, false},
	} {
		dir := t.TempDir()
		write(t, dir, "CHANGELOG.md", []byte(tc.changelog))
		write(t, dir, "js/package.json", []byte(tc.pkg))
		problems := checkVersions(dir)
		if (len(problems) == 0) != tc.ok {
			t.Errorf("changelog %q, package %s: problems %v, want ok=%v", tc.changelog, tc.pkg, problems, tc.ok)
		}
	}
}

// TestRepository runs the rules on this repository itself, so `go test`
// fails where `make lint` would.
func TestRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := trackedFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if problems := append(checkFiles(root, files), checkVersions(root)...); len(problems) > 0 {
		t.Errorf("the repository breaks its rules:\n%s", strings.Join(problems, "\n"))
	}
}
