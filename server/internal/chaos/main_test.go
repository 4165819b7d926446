package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentsync/agentsync/server/internal/pgtest"
)

var (
	pg *pgtest.Cluster
	// syncserverBin is the real server binary, built once per test binary.
	syncserverBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentsync-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	syncserverBin = filepath.Join(dir, "syncserver")
	build := exec.Command("go", "build", "-o", syncserverBin, "./server/cmd/syncserver")
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: build syncserver: %v\n%s", err, out)
		os.Exit(1)
	}
	code := pgtest.Main(m, &pg)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
