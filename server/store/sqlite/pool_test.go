package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/store/storetest"
)

// TestPoolWaitHonoursContext: with every reader busy, a read waits, and
// gives up with the context's error when the context ends.
func TestPoolWaitHonoursContext(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "p.db"), Options{ReadConns: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.NewSession(t, s, "s")

	hold, held := make(chan struct{}), make(chan struct{})
	go s.read(context.Background(), func(c *conn) error {
		close(held)
		<-hold
		return nil
	})
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Session(ctx, "s"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read with every reader busy: %v, want deadline exceeded", err)
	}
	close(hold)
	if _, err := s.Session(context.Background(), "s"); err != nil {
		t.Fatalf("after the reader came back: %v", err)
	}
}

// TestPoolLIFO: the most recently returned connection is handed out first.
func TestPoolLIFO(t *testing.T) {
	p := newPool(3)
	a, b, c := &conn{}, &conn{}, &conn{}
	p.put(a)
	p.put(b)
	p.put(c)
	ctx := context.Background()
	got, _ := p.get(ctx, nil)
	if got != c {
		t.Fatal("pool is not LIFO")
	}
	p.put(got)
	got, _ = p.get(ctx, nil)
	if got != c {
		t.Fatal("the hot connection was not reused")
	}
	p.put(got)
	if n := len(p.drain()); n != 3 {
		t.Fatalf("drain returned %d connections, want 3", n)
	}
}
