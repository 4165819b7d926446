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
//
// GET /livez and /readyz answer load balancers without a token (readiness
// fails while draining, or when the store or NATS is unreachable); an
// Observer (server/metrics) and a Tracer (server/tracing) see what the
// server does.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/internal/api"
	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/forward"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/internal/signals"
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
	// protocol's routes (/v1/..., /healthz, /livez, /readyz) as public
	// files, with CORS headers for AllowedOrigins: web.Handler()
	// (server/web) is the demo page at "/" and the browser package
	// (scripts and the client core module) at "/js/". Nil: those requests
	// get 404 not_found.
	Files http.Handler
	// ResumeInterrupted retries, at New, the turns a crash interrupted (as
	// a client's "retry" action would).
	ResumeInterrupted bool
	// InteractionTimeout, if positive, is how long an approval or a
	// question waits for its answer: its request carries expires_at, and
	// past it the interaction is cancelled, its tool ends output-error
	// and the turn goes on. Zero (or negative): interactions never expire.
	InteractionTimeout time.Duration
	// Logger receives the server's logs; nil discards them. Tokens never
	// appear in them.
	Logger *slog.Logger
	// Limits bound what one client or session may use: a zero field is
	// its documented default, a negative one turns the bound off.
	Limits Limits
	// Cluster, if set, makes this server one node of several sharing
	// Store, a PostgreSQL database (docs/storage.md): a node serves a
	// session (turns, commits, and without a Transport subscriptions) only while
	// it holds the session's lease, and refuses a session another live
	// node serves (409 conflict naming that node). Nil: the only node, as
	// before.
	Cluster *Cluster
	// Attachments, if set, serves the files messages carry by reference
	// (docs/files.md): GET /v1/sessions/{id}/files/{blob} to principals
	// who can read the session or by a signed URL, and the resumable
	// uploads of Attachments.Uploads. A session's delete releases its
	// references. Nil: no file routes (file parts take URLs only).
	Attachments *Attachments
	// Observer, if set, receives the server's events for metrics:
	// metrics.New() (server/metrics) counts them in Prometheus
	// collectors. Nil observes nothing.
	Observer Observer
	// Tracer, if set, traces the server: a span per request (named by its
	// route) and per turn (a child of the request that started it), with
	// the turn's model steps and tool calls as children. tracing.New
	// (server/tracing) is one over OpenTelemetry. Nil traces nothing.
	Tracer Tracer
}

// Attachments configures the file routes.
type Attachments struct {
	// Blobs keeps the files' bytes and which sessions reference them:
	// blob.OpenDir (server/blob) on one node, pgblob.Open
	// (server/blob/pgblob) on several. Required. The caller closes it
	// after Server.Close.
	Blobs blob.Store
	// Uploads, if set, serves the tus upload routes /v1/uploads and
	// /v1/uploads/{upload} behind the server's authorization, CORS and
	// rate limits: uploads.New (server/uploads), which reads each
	// request's principal with Principal. Nil: no uploads.
	Uploads http.Handler
	// SigningKey signs the short-lived file URLs (POST
	// .../files/{blob}/sign); the nodes of a cluster need the same one.
	// Nil: a random key of this process.
	SigningKey []byte
	// SignedURLTTL is a signed URL's default lifetime: zero means 5
	// minutes; at most 24 hours.
	SignedURLTTL time.Duration
	// ModelFileBudget bounds the bytes of the files one model request
	// carries (docs/models.md "Files"): the composer reads a user
	// message's images, PDFs and text files from Blobs for the model, the
	// newest first, and a file past the budget becomes a note saying it
	// was left out. Zero: 10 MiB; negative: no file is read.
	ModelFileBudget int64
	// WriteFileMax bounds a file the model writes with the built-in
	// write_file tool, which becomes an agent file part of the session:
	// zero means 10 MiB; negative: no write_file tool.
	WriteFileMax int64
}

// Principal is the principal an authorized request acts for, for handlers
// the server calls (Attachments.Uploads); "" outside them.
func Principal(r *http.Request) string { return api.Principal(r) }

// MayWrite says whether the principal of a request the server handed to
// Attachments.Uploads (ctx is that request's, or derived from it) may
// write to session id, as posting a message needs: nil for its owner or
// an editor (docs/protocol.md §3.3); the typed 404 or 403 otherwise.
func MayWrite(ctx context.Context, sessionID string) error { return api.MayWrite(ctx, sessionID) }

// FilePath is the path, relative to the server's root, of a session's
// file: the URL its file parts carry.
func FilePath(sessionID, blobID string) string { return api.FilePath(sessionID, blobID) }

// Cluster names this server as one node of several on one database.
type Cluster struct {
	// Node is this node's name, unique among live nodes (a restarted node
	// may take its old name: taking a lease bumps its epoch anyway).
	Node string
	// LeaseTTL bounds how long a dead node's sessions wait before another
	// node takes them over (zero: the default, 5 s); leases renew every
	// third of it. A lease cannot be off: New refuses a negative one.
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
	// ForwardTimeout bounds one forwarded request (zero: the default,
	// 10 s). Negative: no bound.
	ForwardTimeout time.Duration
}

// Transport carries a cluster's traffic between its nodes. natsbus.New
// makes one over a NATS connection; the server package links no client.
type Transport interface {
	// Conn is the transport's connection, as the server's packages use it.
	Conn() bus.Conn
}

// Server serves the protocol. It is an http.Handler; Close stops it.
type Server struct {
	mgr       *session.Manager
	handler   *api.Handler
	responder *forward.Responder // nil without Cluster.Transport
	store     store.Store
	conn      bus.Conn // nil without Cluster.Transport
	signals   *signals.Hub
	lists     *signals.Lists
}

// New starts a server on cfg.Store. Before it returns, it closes every
// agent message a crash left streaming (an "interrupted" error part), so
// nothing it serves is half-written. With Cluster set it does that per
// session instead, when it takes a session's lease from a node that died.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("server: Config.Store is nil")
	}
	if c := cfg.Cluster; c != nil && c.LeaseTTL < 0 {
		return nil, fmt.Errorf("server: Cluster.LeaseTTL is negative (%s)", c.LeaseTTL)
	}
	lim := cfg.Limits.resolve()
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hub, err := signals.New(branchCounter(cfg.Store), cfg.Cluster.conn(), cfg.Cluster.node(), log)
	if err != nil {
		return nil, fmt.Errorf("server: follow the signals of other nodes: %w", err)
	}
	lists, err := signals.NewLists(cfg.Store, cfg.Cluster.conn(), cfg.Cluster.node(), log)
	if err != nil {
		hub.Close()
		return nil, fmt.Errorf("server: follow the session lists of other nodes: %w", err)
	}
	var blobs blob.Store
	var fileBudget, writeMax int64
	if at := cfg.Attachments; at != nil {
		blobs, fileBudget, writeMax = at.Blobs, at.ModelFileBudget, at.WriteFileMax
	}
	mgr, err := session.NewManager(ctx, session.Config{
		Blobs:         blobs,
		FileBudget:    fileBudget,
		WriteFileMax:  writeMax,
		Store:         cfg.Store,
		OnTreeChanged: hub.TreeChanged,
		OnSessionChanged: func(owner, id string, deleted bool, running *bool) {
			lists.Changed(signals.SessionChange{Owner: owner, SessionID: id, Deleted: deleted, Running: running})
		},
		Models:             cfg.Models,
		DefaultModel:       cfg.DefaultModel,
		Tools:              cfg.Tools,
		Logger:             log,
		QueueLimit:         lim.QueueLimit,
		QueueBytes:         lim.QueueBytes,
		FoldBytes:          lim.FoldBytes,
		Pacer:              fanout.NewPacer(lim.WriteInterval),
		Speed:              cfg.Speed,
		ResumeInterrupted:  cfg.ResumeInterrupted,
		InteractionTimeout: max(cfg.InteractionTimeout, 0),
		ToolTimeout:        lim.ToolTimeout,
		MaxToolOutput:      lim.MaxToolOutput,
		MaxSteps:           lim.MaxSteps,
		IdleTimeout:        lim.IdleTimeout,
		MaxLoaded:          lim.MaxLoaded,
		Cluster:            cfg.Cluster.session(),
		Observer:           cfg.Observer,
		Tracer:             tracerOf(cfg.Tracer),
	})
	if err != nil {
		hub.Close()
		lists.Close()
		return nil, fmt.Errorf("server: start sessions: %w", err)
	}
	apiCfg := api.Config{
		Manager:        mgr,
		Logger:         log,
		Authorizer:     cfg.Authorizer,
		AllowedOrigins: cfg.AllowedOrigins,
		MaxBodyBytes:   lim.MaxBodyBytes,
		PingInterval:   lim.PingInterval,
		WriteTimeout:   lim.WriteTimeout,
		Limits:         lim.client,
		Files:          cfg.Files,
		Observer:       cfg.Observer,
		Tracer:         tracerOf(cfg.Tracer),
		Signals:        hub,
		Lists:          lists,
		Bus:            cfg.Cluster.conn(),
	}
	if at := cfg.Attachments; at != nil {
		if at.Blobs == nil {
			_ = mgr.Shutdown(ctx)
			hub.Close()
			return nil, errors.New("server: Attachments.Blobs is nil")
		}
		apiCfg.Attachments = &api.FilesConfig{Blobs: at.Blobs, Uploads: at.Uploads, SigningKey: at.SigningKey, SignedURLTTL: at.SignedURLTTL}
	}
	s := &Server{mgr: mgr, store: cfg.Store, conn: cfg.Cluster.conn(), signals: hub, lists: lists}
	apiCfg.Ready = s.readyChecks
	if s.conn == nil {
		s.handler = api.New(apiCfg)
		return s, nil
	}
	c := cfg.Cluster
	apiCfg.Forward = forward.NewClient(s.conn, c.Node, pick(c.ForwardTimeout, forward.DefaultTimeout, forever))
	s.handler = api.New(apiCfg)
	conn := s.conn
	if s.responder, err = forward.Serve(conn, c.Node, s.handler, log); err != nil {
		_ = mgr.Shutdown(ctx)
		hub.Close()
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

// node is the cluster's name of this node, "" without a cluster.
func (c *Cluster) node() string {
	if c == nil {
		return ""
	}
	return c.Node
}

// branchCounter counts the alternatives at one position of a session's
// path, for the signals of a subscription (1 and 0: only its own).
func branchCounter(st store.Forker) signals.Counter {
	return func(ctx context.Context, sessionID string, sequence int64) (int, int, error) {
		counts, err := st.BranchCounts(ctx, sessionID, sequence, sequence)
		if err != nil || len(counts) == 0 {
			return 1, 0, err
		}
		return counts[0].Count, counts[0].Index, nil
	}
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
	s.signals.Close()
	s.lists.Close()
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
