// Package natstest runs an embedded NATS server for tests and benchmarks
// (github.com/nats-io/nats-server/v2, in the test process) on a loopback
// port, and restarts it on the same port, as an outage of NATS would look
// to the nodes.
package natstest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/natsbus"
)

// Server is one embedded NATS server.
type Server struct {
	mu   sync.Mutex
	srv  *natsserver.Server
	port int
}

// Start starts a server on a free loopback port; the test's cleanup stops
// it.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{port: -1}
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

func (s *Server) start() error {
	srv, err := natsserver.NewServer(&natsserver.Options{
		Host: "127.0.0.1", Port: s.port, NoLog: true, NoSigs: true,
	})
	if err != nil {
		return fmt.Errorf("natstest: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return fmt.Errorf("natstest: the server did not start")
	}
	s.mu.Lock()
	s.srv, s.port = srv, srv.Addr().(*net.TCPAddr).Port
	s.mu.Unlock()
	return nil
}

// URL is the nats:// address of the server.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("nats://127.0.0.1:%d", s.port)
}

// Stop shuts the server down; its clients see the connection drop.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// Restart stops the server and starts a new one on the same port after
// down: every client loses its connection, and reconnects.
func (s *Server) Restart(tb testing.TB, down time.Duration) {
	tb.Helper()
	s.Stop()
	time.Sleep(down)
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
}

// Connect connects a client that reconnects for ever, quickly (as a
// node's connection should); the test's cleanup closes it.
func Connect(tb testing.TB, url, name string) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond), nats.ReconnectJitter(0, 0))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// Bus connects as Connect does and returns the connection as the server's
// packages use it (natsbus's).
func Bus(tb testing.TB, url, name string) bus.Conn {
	tb.Helper()
	return natsbus.New(Connect(tb, url, name)).Conn()
}
