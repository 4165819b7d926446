package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/agentsync/agentsync/server/store/storetest"
)

// BenchmarkCommitCheckpoint measures one checkpoint transaction on the
// throwaway cluster over loopback TCP (fsync off, as SQLite's benchmark
// file is not synced per commit either): the figure beside SQLite's.
func BenchmarkCommitCheckpoint(b *testing.B) {
	s, _ := openTest(b)
	storetest.BenchCommitCheckpoint(b, s)
}

// BenchmarkBaselineSelect1 is one round trip to the same server: SELECT 1
// on a pooled connection, the floor under every statement of a commit.
func BenchmarkBaselineSelect1(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	var one int
	for b.Loop() {
		if err := s.pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
}

var searchFixture struct {
	once sync.Once
	url  string
	err  error
}

// BenchmarkSearch searches the 100,000-message search fixture
// (storetest.BenchSearch) on the throwaway cluster: p50 and p99 of one
// page of 20 hits.
func BenchmarkSearch(b *testing.B) {
	searchFixture.once.Do(func() {
		searchFixture.url, searchFixture.err = cluster.CreateDatabase(context.Background())
		if searchFixture.err != nil {
			return
		}
		s, err := Open(context.Background(), searchFixture.url, Options{Logger: quietLogger()})
		if err != nil {
			searchFixture.err = err
			return
		}
		storetest.BuildSearchFixture(b, s)
		if _, err := s.pool.Exec(context.Background(), `ANALYZE`); err != nil {
			searchFixture.err = err
		}
		s.Close()
	})
	if searchFixture.err != nil {
		b.Fatal(searchFixture.err)
	}
	s := openAt(b, searchFixture.url)
	storetest.BenchSearch(b, s)
}

// BenchmarkCommitConcurrent measures checkpoint commits of 16 sessions
// streaming at once (storetest.BenchCommitConcurrent), the load a node
// with many running turns puts on the database. Target: ≥5,000/s.
func BenchmarkCommitConcurrent(b *testing.B) {
	s, _ := openTest(b)
	storetest.BenchCommitConcurrent(b, s, 16)
}
