package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/natsbus"
)

// connectNATS connects c to -nats, if given, for as long as the node
// runs: it reconnects for ever (a node that gave up would never stream
// another node's session again), and logs its state changes. The caller
// closes the returned connection after the server's Close.
func (o *storeOptions) connectNATS(c *server.Cluster, log *slog.Logger) (*nats.Conn, error) {
	if o.nats == "" {
		return nil, nil
	}
	log = log.With("nats", o.nats)
	nc, err := nats.Connect(o.nats,
		nats.Name("agentsync "+c.Node),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS connection lost", "err", err) }),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("NATS connection back") }),
	)
	if err != nil {
		return nil, fmt.Errorf("-nats: connect to %s: %w", o.nats, err)
	}
	c.Transport = natsbus.New(nc)
	return nc, nil
}
