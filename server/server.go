// Package server is the agentsync reference server as a library: an
// http.Handler that serves the protocol of docs/protocol.md (sessions,
// messages, actions, WebSocket subscriptions) over a store, with the app's
// own models, tools and authorization.
//
// An app mounts it beside its own routes:
//
//	st, _ := sqlite.Open(ctx, "agent.db", sqlite.Options{}) // or postgres.Open
//	srv, _ := server.New(ctx, server.Config{Store: st, Authorizer: myAuth})
//	mux.Handle("/agent/", http.StripPrefix("/agent", srv))
//	...
//	srv.Close(ctx) // before closing st
//
// examples/embed is a whole app doing so, with its own sign-in as the
// Authorizer; cmd/syncserver is the thinnest such app: flags, then New.
//
// Limits bound each client's request rate and subscriptions (429
// rate_limited past them) and the sessions kept in memory; Close drains:
// later requests get 503 closed, running turns close with a committed
// "shutdown" error part, and subscriptions end with WebSocket close 1001.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/internal/api"
	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/internal/forward"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store"
)

// Config configures a Server. Only Store is required.
type Config struct {
	// Store keeps the sessions. The caller opens it and closes it after
	// Server.Close.
	Store store.Store
	// Models are the models a session may use; nil means scripted.Registry()
	// (the scripted demo model only).
	Models model.Registry
	// DefaultModel is the model of a session created without one; ""
	// means model.DefaultName.
	DefaultModel string
	// Tools are the tools the models may call; nil means scripted.DemoTools().
	Tools []model.Tool
	// Speed paces the scripted model and the demo tools; zero runs them
	// as fast as possible.
	Speed model.Speed
	// Authorizer resolves every request to a principal, who owns the
	// sessions it creates and alone may use them. Nil means auth.Open:
	// every request is the anonymous principal.
	Authorizer auth.Authorizer
	// AllowedOrigins are browser origins allowed besides the server's own
	// host: "http://localhost:5173", "localhost:5173", or "*" for any.
	AllowedOrigins []string
	// Files, if set, serves the GET and HEAD requests outside the
	// protocol's routes (/v1/..., /healthz) as public files, with CORS
	// headers for AllowedOrigins: web.Handler() (server/web) is the demo
	// page at "/" and the browser package (scripts and the client core
	// module) at "/js/". Nil: those requests get 404 not_found.
	Files http.Handler
	// ResumeInterrupted retries, at New, the turns a crash interrupted (as
	// a client's "retry" action would).
	ResumeInterrupted bool
	// Logger receives the server's logs; nil discards them. Tokens never
	// appear in them.
	Logger *slog.Logger
	// Limits bound what one client or session may use; zero fields take
	// the documented defaults.
	Limits Limits
	// Cluster, if set, makes this server one node of several sharing
	// Store, a PostgreSQL database (docs/storage.md): a node serves a
	// session (turns, commits, and without a Transport subscriptions) only while
	// it holds the session's lease, and refuses a session another live
	// node serves (409 conflict naming that node). Nil: the only node, as
	// before.
	Cluster *Cluster
}

// Cluster names this server as one node of several on one database.
type Cluster struct {
	// Node is this node's name, unique among live nodes (a restarted node
	// may take its old name: taking a lease bumps its epoch anyway).
	Node string
	// LeaseTTL bounds how long a dead node's sessions wait before another
	// node takes them over (default 5 s); leases renew every third of it.
	LeaseTTL time.Duration
	// Transport, if set, connects the nodes (docs/storage.md): each
	// session's frames go from the node that serves it to the others, so
	// a subscription may reach any node; a request that changes a session
	// another node serves (post, answer, action, delete) is forwarded to
	// that node and answered with its answer, instead of 409 conflict.
	// natsbus.New(nc) (server/natsbus) carries them over a NATS
	// connection, which the app opens with reconnects on and closes after
	// Server.Close. Nil: every request and subscription must reach the
	// node that serves the session.
	Transport Transport
	// ForwardTimeout bounds one forwarded request (default 10 s).
	ForwardTimeout time.Duration
}

// Transport carries a cluster's traffic between its nodes. natsbus.New
// makes one over a NATS connection; the server package links no client.
type Transport interface {
	// Conn is the transport's connection, as the server's packages use it.
	Conn() bus.Conn
}

// Defaults of the Limits that bound one client. A client is a principal,
// or, where every caller is the one shared principal (auth.Open,
// auth.SharedToken), one IP address.
const (
	DefaultRequestsPerSecond       = 20
	DefaultRequestBurst            = 100
	DefaultSubscribersPerSession   = 32
	DefaultSubscribersPerPrincipal = 64
)

// Limits bound the server's memory and work. Zero means the default.
type Limits struct {
	// RequestsPerSecond is the sustained request rate of one client, and
	// RequestBurst how many requests it may make at once after a quiet
	// spell (a token bucket; defaults 20/s and 100). A request over it is
	// answered 429 rate_limited with a Retry-After header. Negative: no
	// limit. Health checks are not counted; nor are requests refused
	// before the limiter (bad origin, 401).
	RequestsPerSecond float64
	RequestBurst      int
	// SubscribersPerSession and SubscribersPerPrincipal bound the open
	// subscriptions (WebSocket, and AI SDK streams) of one session and of
	// one client (defaults 32 and 64). One more is refused before the
	// upgrade, 429 rate_limited. Negative: no bound.
	SubscribersPerSession   int
	SubscribersPerPrincipal int
	// MaxBodyBytes bounds a request body (default 1 MiB).
	MaxBodyBytes int64
	// QueueLimit bounds the frames queued for one subscriber (default
	// 4096), QueueBytes their delta text (default 16 MiB); a subscriber that
	// falls further behind is resynced. Deltas of one part wait folded
	// into one frame (up to 64 KiB), so a long answer counts by its bytes.
	QueueLimit int
	QueueBytes int
	// FoldBytes bounds a folded delta (default 64 KiB); -1 delivers every
	// delta as the model produced it, however far behind a subscriber is.
	FoldBytes int
	// IdleTimeout unloads a session from memory after that long with no
	// request, turn or subscriber; 0 keeps sessions loaded.
	IdleTimeout time.Duration
	// MaxLoaded caps the sessions in memory, least recently used idle ones
	// unloaded first; 0 means no cap. Busy sessions are never unloaded.
	MaxLoaded int
	// ToolTimeout bounds one tool run (default 60 s).
	ToolTimeout time.Duration
	// MaxToolOutput bounds a tool's output in bytes of JSON (default 32 KiB).
	MaxToolOutput int
	// MaxSteps bounds the model steps of one turn (default 32).
	MaxSteps int
	// PingInterval and WriteTimeout of subscriptions (default 20 s, 10 s).
	PingInterval time.Duration
	WriteTimeout time.Duration
}

// Server serves the protocol. It is an http.Handler; Close stops it.
type Server struct {
	mgr       *session.Manager
	handler   *api.Handler
	responder *forward.Responder // nil without Cluster.Transport
}

// client is the API's view of the limits per client, defaults filled in
// and negative values turned into "no bound" (0).
func (l Limits) client() api.Limits {
	pick := func(v, def int) int {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	rate := l.RequestsPerSecond
	switch {
	case rate < 0:
		rate = 0
	case rate == 0:
		rate = DefaultRequestsPerSecond
	}
	return api.Limits{
		RequestRate:           rate,
		RequestBurst:          pick(l.RequestBurst, DefaultRequestBurst),
		SubscribersPerSession: pick(l.SubscribersPerSession, DefaultSubscribersPerSession),
		SubscribersPerClient:  pick(l.SubscribersPerPrincipal, DefaultSubscribersPerPrincipal),
	}
}

// New starts a server on cfg.Store. Before it returns, it closes every
// agent message a crash left streaming (an "interrupted" error part), so
// nothing it serves is half-written. With Cluster set it does that per
// session instead, when it takes a session's lease from a node that died.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mgr, err := session.NewManager(ctx, session.Config{
		Store:             cfg.Store,
		Models:            cfg.Models,
		DefaultModel:      cfg.DefaultModel,
		Tools:             cfg.Tools,
		Logger:            log,
		QueueLimit:        cfg.Limits.QueueLimit,
		QueueBytes:        cfg.Limits.QueueBytes,
		FoldBytes:         cfg.Limits.FoldBytes,
		Speed:             cfg.Speed,
		ResumeInterrupted: cfg.ResumeInterrupted,
		ToolTimeout:       cfg.Limits.ToolTimeout,
		MaxToolOutput:     cfg.Limits.MaxToolOutput,
		MaxSteps:          cfg.Limits.MaxSteps,
		IdleTimeout:       cfg.Limits.IdleTimeout,
		MaxLoaded:         cfg.Limits.MaxLoaded,
		Cluster:           cfg.Cluster.session(),
	})
	if err != nil {
		return nil, fmt.Errorf("server: start sessions: %w", err)
	}
	apiCfg := api.Config{
		Manager:        mgr,
		Logger:         log,
		Authorizer:     cfg.Authorizer,
		AllowedOrigins: cfg.AllowedOrigins,
		MaxBodyBytes:   cfg.Limits.MaxBodyBytes,
		PingInterval:   cfg.Limits.PingInterval,
		WriteTimeout:   cfg.Limits.WriteTimeout,
		Limits:         cfg.Limits.client(),
		Files:          cfg.Files,
	}
	conn := cfg.Cluster.conn()
	if conn == nil {
		return &Server{mgr: mgr, handler: api.New(apiCfg)}, nil
	}
	c := cfg.Cluster
	apiCfg.Forward = forward.NewClient(conn, c.Node, c.ForwardTimeout)
	s := &Server{mgr: mgr, handler: api.New(apiCfg)}
	if s.responder, err = forward.Serve(conn, c.Node, s.handler, log); err != nil {
		_ = mgr.Shutdown(ctx)
		return nil, fmt.Errorf("server: answer forwarded requests: %w", err)
	}
	return s, nil
}

func (c *Cluster) session() *session.ClusterConfig {
	if c == nil {
		return nil
	}
	return &session.ClusterConfig{Node: c.Node, LeaseTTL: c.LeaseTTL, NATS: c.conn()}
}

// conn is the cluster's bus connection, nil without a Transport.
func (c *Cluster) conn() bus.Conn {
	if c == nil || c.Transport == nil {
		return nil
	}
	return c.Transport.Conn()
}

// ServeHTTP serves one request of the protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Close drains the server: every request from then on is refused (503
// closed), running turns end (their messages close with a "shutdown"
// error part, committed), then every subscription ends with WebSocket
// close code 1001 (going away), which clients treat as a lost connection
// and reconnect, to this server's successor. It returns when done or when
// ctx ends, whichever is first; subscriptions are closed either way.
//
// In a cluster with a Transport, requests other nodes forward here meanwhile are
// refused as not served here (they claim the session again); after the
// leases are released, this node stops answering them.
func (s *Server) Close(ctx context.Context) error {
	s.handler.Drain()
	err := s.mgr.Shutdown(ctx)
	if s.responder != nil {
		err = errors.Join(err, s.responder.Close(ctx))
	}
	return err
}

// Digest is the view digest of a session as a client that holds all of it
// computes it (docs/protocol.md §7): a client that converged shows the same.
func (s *Server) Digest(ctx context.Context, sessionID string) (string, error) {
	return s.mgr.Digest(ctx, sessionID, false)
}

// Models lists the names of the models sessions may use.
func (s *Server) Models() []string { return s.mgr.Models() }
