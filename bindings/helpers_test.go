package bindings

import (
	"os"
	"sync"
)

var (
	rtOnce   sync.Once
	rtShared *Runtime
	rtErr    error
	// rtCacheDir is removed by TestMain.
	rtCacheDir string
)

// osMkdirTemp makes the compilation cache dir shared by a test binary's
// runtimes (t.TempDir would vanish with the first test).
func osMkdirTemp() (string, error) {
	dir, err := os.MkdirTemp("", "agentsync-wazero-cache-")
	rtCacheDir = dir
	return dir, err
}
