package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed js/errcodes.js and js/errcodes.d.ts are what the generator
// writes from wire.ErrorCodes today: the JS host's table cannot drift.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for name, want := range files() {
		got, err := os.ReadFile(filepath.Join("..", "..", "js", name))
		if err != nil {
			t.Fatalf("%v: run go generate ./js", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("js/%s differs from wire.ErrorCodes: run go generate ./js", name)
		}
	}
}
