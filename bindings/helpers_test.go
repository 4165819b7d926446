package bindings

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

var (
	rtOnce   sync.Once
	rtShared *core.Runtime
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

// testRuntime compiles the module once per test binary, with the
// compilation cache in a temp dir so tests never touch the user's cache.
func testRuntime(t testing.TB) *core.Runtime {
	t.Helper()
	rtOnce.Do(func() {
		dir, err := osMkdirTemp()
		if err != nil {
			rtErr = err
			return
		}
		rtShared, rtErr = core.NewRuntime(context.Background(), core.RuntimeConfig{CacheDir: dir})
	})
	if rtErr != nil {
		t.Fatalf("NewRuntime: %v", rtErr)
	}
	return rtShared
}

// wantCode fails unless err is a *synccore.Error with code.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *synccore.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v, want a *synccore.Error with code %q", err, code)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if rtShared != nil {
		_ = rtShared.Close(context.Background())
	}
	if rtCacheDir != "" {
		_ = os.RemoveAll(rtCacheDir)
	}
	os.Exit(code)
}

func encode(b testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func framesEvent(b testing.TB, frames ...synccore.Frame) synccore.Event {
	return synccore.Event{Type: synccore.EvFrames, Data: encode(b, frames)}
}
