package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/server/store/sqlite"
)

// storeOptions choose the store: the SQLite file of -db (the default, no
// services), or a PostgreSQL database named by -store.
type storeOptions struct {
	url string
}

func (o *storeOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "store", "", "a postgres://... URL keeps the sessions in PostgreSQL instead of the -db SQLite file "+
		"(one node per database: leases and fan-out across nodes are not wired into the server yet)")
}

// open opens the chosen store; the caller closes it.
func (o *storeOptions) open(ctx context.Context, db string, log *slog.Logger) (store.Store, error) {
	switch {
	case strings.HasPrefix(o.url, "postgres://"), strings.HasPrefix(o.url, "postgresql://"):
		st, err := postgres.Open(ctx, o.url, postgres.Options{Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL store: %w", err)
		}
		return st, nil
	case o.url != "":
		return nil, fmt.Errorf("-store: want a postgres:// URL, got %q", o.url)
	}
	if dir := filepath.Dir(db); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create db directory: %w", err)
		}
	}
	st, err := sqlite.Open(ctx, db, sqlite.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", db, err)
	}
	return st, nil
}
