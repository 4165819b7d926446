// Package bus is the message bus a cluster's nodes share, as the server's
// packages use it (internal/natsfan for frames, internal/forward for
// forwarded requests): subjects, publish, subscribe, request and reply,
// and the connection's state. It imports no client: server/natsbus
// implements Conn over a NATS connection, so the server package itself
// does not link NATS.
package bus

import (
	"context"
	"errors"
)

// Conn is one node's connection to the bus. Its methods are safe for
// concurrent use.
type Conn interface {
	// Publish sends data on subject to its subscribers, if any. It may
	// return before the bus has the message (buffered), and fails if the
	// message is too large or the connection is closed.
	Publish(subject string, data []byte) error
	// Subscribe calls handle with every message on subject, one at a time
	// in the order the bus delivers them, until Unsubscribe.
	Subscribe(subject string, handle func(*Msg)) (Subscription, error)
	// Request sends data on subject and waits for the first reply, until
	// ctx ends (ErrTimeout when its deadline passed). With no subscriber
	// it fails with ErrNoResponders.
	Request(ctx context.Context, subject string, data []byte) (*Msg, error)
	// Flush waits until the bus has every message and subscription sent
	// so far, until ctx ends.
	Flush(ctx context.Context) error
	// MaxPayload is the largest message the bus takes, in bytes (0:
	// unknown).
	MaxPayload() int64
	// Connected reports whether the connection is up now.
	Connected() bool
	// StatusChanged returns the connection's state changes from now on,
	// and a function that stops them and closes the channel.
	StatusChanged() (<-chan Status, func())
}

// Msg is a message received on a subscription, or a request's reply.
type Msg struct {
	Subject string
	Data    []byte
	// Respond answers the request this message is; it fails when the
	// message is none.
	Respond func(data []byte) error
}

// Subscription is one Subscribe's handler.
type Subscription interface {
	// Unsubscribe stops the handler; messages already being delivered
	// may still reach it.
	Unsubscribe() error
}

// Status is a state of the connection.
type Status int

// The connection's states.
const (
	Connected Status = iota
	Disconnected
	Reconnecting
	Closed
)

// String names the state.
func (s Status) String() string {
	switch s {
	case Connected:
		return "connected"
	case Disconnected:
		return "disconnected"
	case Reconnecting:
		return "reconnecting"
	case Closed:
		return "closed"
	}
	return "unknown"
}

var (
	// ErrNoResponders: a request found no subscriber on its subject.
	ErrNoResponders = errors.New("bus: no responders")
	// ErrTimeout: a request's reply did not come in time.
	ErrTimeout = errors.New("bus: timeout")
	// ErrClosed: the connection is closed.
	ErrClosed = errors.New("bus: connection closed")
)
