package core

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentsync/agentsync/wasm/module"
)

// TestWasmModuleIsFresh rebuilds the module from the sources exactly as
// `make wasm` does and fails when the committed, embedded one differs: a
// change to synccore or wasm/ needs `make wasm` before it is committed.
//
// The module embeds the Go version that built it, and a compiler's output
// may change between patch releases, so both builds use the toolchain that
// go.mod pins (GOTOOLCHAIN=<toolchain line>; the go command fetches it when
// the local Go is another one). The check therefore holds on any Go that
// can run the tests, not only on the one that built the committed module.
func TestWasmModuleIsFresh(t *testing.T) {
	toolchain := pinnedToolchain(t)
	if !bytes.Contains(module.Wasm, []byte(toolchain)) {
		t.Fatalf("wasm/module/agentsync.wasm was not built by %s (go.mod's toolchain): run make wasm", toolchain)
	}
	out := filepath.Join(t.TempDir(), "agentsync.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, "./wasm")
	cmd.Dir = filepath.Join("..", "..") // the repository root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOTOOLCHAIN="+toolchain)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the wasm module with %s: %v\n%s", toolchain, err, msg)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, module.Wasm) {
		t.Fatalf("wasm/module/agentsync.wasm is stale (%d bytes embedded, %d built from the sources by %s): run make wasm",
			len(module.Wasm), len(built), toolchain)
	}
}

// pinnedToolchain is go.mod's toolchain line (e.g. "go1.26.8").
func pinnedToolchain(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct{ Toolchain string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	if mod.Toolchain == "" {
		t.Fatal("go.mod has no toolchain line: the module's bytes depend on the Go that builds it, so go.mod must pin one")
	}
	return mod.Toolchain
}
