// Package natsbus connects the nodes of a cluster over NATS: an app that
// runs several servers on one database opens a NATS connection and sets
// server.Cluster.Transport to New(nc). Each session's frames then go from
// the node that serves it to the others, so a subscription may reach any
// node, and a request that changes a session another node serves is
// forwarded to that node (docs/storage.md). Only an app that imports this
// package links the NATS client.
package natsbus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/agentsync/agentsync/server/internal/bus"
)

// Transport is a cluster's traffic over one NATS connection.
type Transport struct {
	c *conn
}

// New carries the cluster's traffic over nc. Connect nc with reconnects on
// (nats.MaxReconnects(-1)): without them a lost connection stays lost.
// The caller closes nc after server.Server.Close. Only the cluster's
// nodes may publish on it (docs/storage.md, Forwarding).
func New(nc *nats.Conn) *Transport { return &Transport{c: &conn{nc: nc}} }

// Conn is the connection as the server's own packages use it.
func (t *Transport) Conn() bus.Conn { return t.c }

// conn implements bus.Conn over a NATS connection.
type conn struct{ nc *nats.Conn }

func (c *conn) Publish(subject string, data []byte) error {
	return mapErr(c.nc.Publish(subject, data))
}

func (c *conn) Subscribe(subject string, handle func(*bus.Msg)) (bus.Subscription, error) {
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) { handle(wrap(m)) })
	if err != nil {
		return nil, mapErr(err)
	}
	return subscription{sub}, nil
}

func (c *conn) Request(ctx context.Context, subject string, data []byte) (*bus.Msg, error) {
	m, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return nil, mapErr(err)
	}
	return wrap(m), nil
}

func (c *conn) Flush(ctx context.Context) error { return mapErr(c.nc.FlushWithContext(ctx)) }

func (c *conn) MaxPayload() int64 { return c.nc.MaxPayload() }

func (c *conn) Connected() bool { return c.nc.Status() == nats.CONNECTED }

func (c *conn) StatusChanged() (<-chan bus.Status, func()) {
	in := c.nc.StatusChanged(nats.CONNECTED, nats.RECONNECTING, nats.DISCONNECTED, nats.CLOSED)
	out := make(chan bus.Status, cap(in))
	go func() {
		defer close(out)
		for st := range in {
			out <- status(st)
		}
	}()
	return out, func() { c.nc.RemoveStatusListener(in) }
}

func status(st nats.Status) bus.Status {
	switch st {
	case nats.CONNECTED:
		return bus.Connected
	case nats.RECONNECTING:
		return bus.Reconnecting
	case nats.CLOSED:
		return bus.Closed
	}
	return bus.Disconnected
}

type subscription struct{ sub *nats.Subscription }

func (s subscription) Unsubscribe() error { return mapErr(s.sub.Unsubscribe()) }

// wrap is m as a bus message; its Respond fails unless m is a request.
func wrap(m *nats.Msg) *bus.Msg {
	return &bus.Msg{Subject: m.Subject, Data: m.Data,
		Respond: func(data []byte) error { return mapErr(m.Respond(data)) }}
}

// mapErr wraps the NATS errors the server tells apart in bus's, keeping
// NATS's for the message.
func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w: %w", bus.ErrNoResponders, err)
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", bus.ErrTimeout, err)
	case errors.Is(err, nats.ErrConnectionClosed):
		return fmt.Errorf("%w: %w", bus.ErrClosed, err)
	}
	return err
}
