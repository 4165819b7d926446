package postgres

import (
	"context"
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
