package bindings

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentsync/agentsync/wasm/module"
)

// TestWasmModuleIsFresh rebuilds the module from the sources exactly as
// `make wasm` does and fails when the committed, embedded one differs: a
// change to synccore or wasm/ needs `make wasm` before it is committed.
func TestWasmModuleIsFresh(t *testing.T) {
	out := filepath.Join(t.TempDir(), "agentsync.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./wasm")
	cmd.Dir = ".." // the repository root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the wasm module: %v\n%s", err, msg)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, module.Wasm) {
		t.Fatalf("wasm/module/agentsync.wasm is stale (%d bytes embedded, %d built from the sources): run make wasm",
			len(module.Wasm), len(built))
	}
}
