package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// MaxFileSize is the largest file the repository tracks. The wasm module
// (about 2.8 MB) and the lockfiles stay under it; a build output or a data
// set does not belong in git.
const MaxFileSize = 4 << 20

// executableMagic are the first bytes of the executable formats a Go or C
// build writes: ELF, Mach-O (both byte orders, 32 and 64 bit, universal)
// and PE (the "MZ" header of a Windows .exe).
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// checkFiles returns one problem per tracked file that breaks a rule. A
// file that is tracked but deleted from the work tree is not a problem
// (git status shows it).
func checkFiles(root string, names []string) []string {
	var problems []string
	for _, name := range names {
		f, err := os.Open(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		problems = append(problems, checkFile(name, f)...)
		f.Close()
	}
	return problems
}

func checkFile(name string, f *os.File) []string {
	info, err := f.Stat()
	if err != nil {
		return []string{err.Error()}
	}
	if info.IsDir() { // a submodule or a symlink to a folder
		return nil
	}
	var problems []string
	if info.Size() > MaxFileSize {
		problems = append(problems, fmt.Sprintf("%s is %d bytes, over the %d-byte bound for a tracked file", name, info.Size(), MaxFileSize))
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	for _, magic := range executableMagic {
		if bytes.HasPrefix(head[:n], magic) {
			problems = append(problems, fmt.Sprintf("%s is a compiled executable: build it, do not track it", name))
			break
		}
	}
	return problems
}

var releaseHeading = regexp.MustCompile(`(?m)^## \[?v?(\d+\.\d+\.\d+[0-9A-Za-z.-]*)\]?`)

// checkVersions holds the release's one version: the newest heading of
// CHANGELOG.md is the npm package's version, and the Go module's tag is
// "v" followed by it (docs/release.md).
func checkVersions(root string) []string {
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return []string{err.Error()}
	}
	m := releaseHeading.FindSubmatch(changelog)
	if m == nil {
		return []string{"CHANGELOG.md has no release heading (## vX.Y.Z)"}
	}
	pkg, err := os.ReadFile(filepath.Join(root, "js", "package.json"))
	if err != nil {
		return []string{err.Error()}
	}
	var meta struct{ Version string }
	if err := json.Unmarshal(pkg, &meta); err != nil {
		return []string{fmt.Sprintf("js/package.json: %v", err)}
	}
	if meta.Version != string(m[1]) {
		return []string{fmt.Sprintf("js/package.json's version %q is not CHANGELOG.md's newest release %q", meta.Version, m[1])}
	}
	return nil
}
