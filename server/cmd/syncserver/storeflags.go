package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/server/store/sqlite"
)

// storeOptions choose the store: the SQLite file of -db (the default, no
// services), or a PostgreSQL database named by -store.
type storeOptions struct {
	url      string
	node     string
	leaseTTL time.Duration
	nats     string
}

func (o *storeOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "store", "", "a postgres://... URL keeps the sessions in PostgreSQL instead of the -db SQLite file")
	fs.StringVar(&o.node, "node", "", "with -store postgres://: this node's name, unique among the nodes sharing the database; "+
		"a node serves a session only while it holds its lease (without -nats, route each session to one node)")
	fs.DurationVar(&o.leaseTTL, "lease-ttl", 5*time.Second, "with -node: how long a dead node's sessions wait for another node")
	fs.StringVar(&o.nats, "nats", "", "with -node: a nats://... URL; frames cross nodes and requests are forwarded to the session's node over NATS, so a client may reach any node")
}

// cluster is the server's cluster config: nil without -node.
func (o *storeOptions) cluster() (*server.Cluster, error) {
	switch {
	case o.node == "" && o.nats != "":
		return nil, fmt.Errorf("-nats needs -node: NATS connects the nodes of a cluster")
	case o.node == "":
		return nil, nil
	case o.url == "":
		return nil, fmt.Errorf("-node needs -store postgres://...: nodes share a PostgreSQL database")
	case o.leaseTTL <= 0:
		return nil, fmt.Errorf("-lease-ttl must be positive, got %s", o.leaseTTL)
	}
	return &server.Cluster{Node: o.node, LeaseTTL: o.leaseTTL}, nil
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
