package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store/storetest"
	"github.com/jackc/pgx/v5"
)

func TestZZQTime(t *testing.T) {
	url := cluster.Database(t)
	s := openAt(t, url)
	storetest.BuildSearchFixture(t, s)
	ctx := context.Background()
	s.pool.Exec(ctx, `ANALYZE`)
	for _, q := range []string{"w2x:*", "w40x:*", "w900x:*", "w3x & w60x:*", "w12:*", "w5007x:*"} {
		for name, sql := range map[string]string{"probe": probeSQL, "common": searchCommonSQL, "rare": searchRareSQL} {
			t0 := time.Now()
			for range 5 {
				s.read(ctx, func(tx pgx.Tx) error {
					var rows pgx.Rows
					var err error
					if name == "probe" {
						rows, err = tx.Query(ctx, sql, q, int64(1<<62))
					} else {
						rows, err = tx.Query(ctx, sql, q, int64(1<<62), "bench", 21)
					}
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
					}
					rows.Close()
					return nil
				})
			}
			t.Logf("%-14s %-6s %v", q, name, time.Since(t0)/5)
		}
	}
}
