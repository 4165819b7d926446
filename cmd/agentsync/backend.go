package main

import (
	"context"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/synccore"
)

// backend is what the UI asks of the server: the session list, and one
// open session at a time. The program's is bindings (liveBackend); the
// model's unit tests use a fake.
type backend interface {
	Sessions(ctx context.Context) ([]bindings.Session, error)
	Create(ctx context.Context) (bindings.Session, error)
	Rename(ctx context.Context, sessionID, title string) (bindings.Session, error)
	Delete(ctx context.Context, sessionID string) error
	// Open starts syncing a session; onView gets every (coalesced) view
	// from the client's subscriber goroutine until Close.
	Open(ctx context.Context, sessionID string, onView func(bindings.View)) (conn, error)
}

// conn is one open session.
type conn interface {
	Send(ctx context.Context, text string) error
	Answer(ctx context.Context, interactionID string, r bindings.InteractionResponse) error
	Action(ctx context.Context, a bindings.ActionType, value string) error
	LoadOlder(ctx context.Context) error
	// Regenerate makes a new version of the reply at seq (a fork of the
	// conversation) and returns its session; Branches lists the versions
	// at seq (docs/protocol.md §3.2).
	Regenerate(ctx context.Context, seq int64) (string, error)
	Branches(ctx context.Context, seq int64) (bindings.Branches, error)
	Close() error
}

// liveBackend is the backend on package bindings.
type liveBackend struct{ o options }

func (b liveBackend) Sessions(ctx context.Context) ([]bindings.Session, error) {
	return b.o.api().SessionsN(ctx, 100)
}

func (b liveBackend) Create(ctx context.Context) (bindings.Session, error) {
	return b.o.api().CreateSession(ctx, b.o.model)
}

func (b liveBackend) Rename(ctx context.Context, id, title string) (bindings.Session, error) {
	return b.o.api().RenameSession(ctx, id, title)
}

func (b liveBackend) Delete(ctx context.Context, id string) error {
	return b.o.api().DeleteSession(ctx, id)
}

func (b liveBackend) Open(ctx context.Context, id string, onView func(bindings.View)) (conn, error) {
	c, err := bindings.New(ctx, b.o.clientConfig(id))
	if err != nil {
		return nil, err
	}
	unsub := c.Subscribe(onView)
	return liveConn{c: c, unsub: unsub}, nil
}

type liveConn struct {
	c     *bindings.Client
	unsub func()
}

func (l liveConn) Send(ctx context.Context, text string) error {
	_, err := l.c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: text})
	return err
}

func (l liveConn) Answer(ctx context.Context, id string, r bindings.InteractionResponse) error {
	_, err := l.c.Answer(ctx, id, r)
	return err
}

func (l liveConn) Action(ctx context.Context, a bindings.ActionType, value string) error {
	_, err := l.c.Action(ctx, a, value)
	return err
}

func (l liveConn) LoadOlder(ctx context.Context) error { return l.c.LoadOlder(ctx) }

func (l liveConn) Regenerate(ctx context.Context, seq int64) (string, error) {
	s, err := l.c.Regenerate(ctx, seq)
	return s.SessionID, err
}

func (l liveConn) Branches(ctx context.Context, seq int64) (bindings.Branches, error) {
	return l.c.Branches(ctx, seq)
}

func (l liveConn) Close() error {
	l.unsub()
	return l.c.Close()
}
