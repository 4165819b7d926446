package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

var cluster *Cluster

func TestMain(m *testing.M) { os.Exit(Main(m, &cluster)) }

// The cluster serves queries, and each database is new and empty.
func TestClusterServesDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := cluster.Database(t), cluster.Database(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a new database has %d tables (%v)", n, err)
	}
	var two int
	if err := conn.QueryRow(ctx, `SELECT 1 + 1`).Scan(&two); err != nil || two != 2 {
		t.Fatalf("SELECT 1 + 1 = %d (%v)", two, err)
	}
}

// A data directory under a private directory is out of the postgres
// user's reach: Start then makes it under /tmp.
func TestTraversable(t *testing.T) {
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(private+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	if traversable(private+"/sub") || !traversable("/") {
		t.Fatalf("traversable: %s/sub = %v, / = %v", private, traversable(private+"/sub"), traversable("/"))
	}
}
