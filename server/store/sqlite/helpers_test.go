package sqlite

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestConformance runs the store suite against SQLite: one directory per
// test, one file per name in it.
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	dirs := map[*testing.T]string{}
	storetest.Run(t, func(t *testing.T, name string) store.Store {
		mu.Lock()
		dir, ok := dirs[t]
		if !ok {
			dir = t.TempDir()
			dirs[t] = dir
		}
		mu.Unlock()
		return openAt(t, filepath.Join(dir, name+".db"))
	})
}

// openTest opens a store on a fresh file in t.TempDir() and closes it at
// the end of the test.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "dir", "agentsync.db")
	return openAt(t, path), path
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
