package postgres

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/server/internal/pgtest"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/storetest"
)

// cluster is the throwaway PostgreSQL server of this test binary.
var cluster *pgtest.Cluster

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &cluster)) }

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestConformance runs the store suite against PostgreSQL: one database
// per test and name.
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	urls := map[string]string{}
	storetest.Run(t, func(t *testing.T, name string) store.Store {
		key := t.Name() + "/" + name
		mu.Lock()
		url, ok := urls[key]
		if !ok {
			url = cluster.Database(t)
			urls[key] = url
		}
		mu.Unlock()
		return openAt(t, url)
	})
}

// openTest opens a store on a new database, closed at the end of the test.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	url := cluster.Database(t)
	return openAt(t, url), url
}

func openAt(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, Options{Logger: quietLogger()})
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
