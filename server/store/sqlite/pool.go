package sqlite

import (
	"context"
	"sync"

	"github.com/agentsync/agentsync/server/store"
)

// pool hands out connections last-in first-out. LIFO matters: each
// connection has its own page cache and its own memory map of the file, so
// reusing the most recently used one keeps reads warm (a page of 50
// messages cost about half the CPU with one hot connection than with four
// taken in turn). Tokens in sem always equal len(free), so a receive from
// sem guarantees a free connection.
type pool struct {
	sem  chan struct{}
	mu   sync.Mutex
	free []*conn
}

func newPool(size int) *pool {
	return &pool{sem: make(chan struct{}, size), free: make([]*conn, 0, size)}
}

// get waits for a connection, ctx or closed, whichever comes first.
func (p *pool) get(ctx context.Context, closed <-chan struct{}) (*conn, error) {
	select {
	case <-p.sem:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-closed:
		return nil, store.ErrClosed()
	}
	return p.take(), nil
}

// take removes a free connection; the caller holds its sem token.
func (p *pool) take() *conn {
	p.mu.Lock()
	c := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.mu.Unlock()
	return c
}

// tryGet takes a free connection if there is one, without waiting.
func (p *pool) tryGet() (*conn, bool) {
	select {
	case <-p.sem:
	default:
		return nil, false
	}
	return p.take(), true
}

func (p *pool) put(c *conn) {
	p.mu.Lock()
	p.free = append(p.free, c)
	p.mu.Unlock()
	p.sem <- struct{}{}
}

// drain takes every connection back, waiting for the ones in use.
func (p *pool) drain() []*conn {
	out := make([]*conn, 0, cap(p.sem))
	for range cap(p.sem) {
		<-p.sem
		p.mu.Lock()
		out = append(out, p.free[len(p.free)-1])
		p.free = p.free[:len(p.free)-1]
		p.mu.Unlock()
	}
	return out
}
