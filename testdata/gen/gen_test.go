package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestTracesUpToDate: the committed trace files are exactly what the
// sources generate (run `go run ./testdata/gen` after changing a source),
// and every hand-written expectation still agrees with the client.
func TestTracesUpToDate(t *testing.T) {
	all := allTraces()
	if len(all) < 40 {
		t.Fatalf("%d traces, want at least 40", len(all))
	}
	files, _ := filepath.Glob("../traces/*.json")
	if len(files) != len(all) {
		t.Fatalf("%d files in testdata/traces, sources define %d traces", len(files), len(all))
	}
	for i, tr := range all {
		f, err := build(tr)
		if err != nil {
			t.Fatalf("trace %s: %v", tr.name, err)
		}
		want, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("../traces/%02d-%s.json", i+1, tr.name)
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("trace %s: %v", tr.name, err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("%s is stale: run go run ./testdata/gen", name)
		}
	}
}
