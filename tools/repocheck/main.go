// Command repocheck holds the repository's rules for tracked files, run by
// `make lint`: no compiled executable (an ELF, Mach-O or PE file) is
// tracked, no tracked file is over 4 MB (the wasm module and the lockfiles
// stay under it), and the release versions agree (js/package.json's
// version is CHANGELOG.md's newest release heading).
//
//	go run ./tools/repocheck
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	files, err := trackedFiles(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "repocheck:", err)
		os.Exit(2)
	}
	problems := checkFiles(".", files)
	problems = append(problems, checkVersions(".")...)
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "repocheck:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// trackedFiles lists the files git tracks in the working tree at root,
// relative to it.
func trackedFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}
