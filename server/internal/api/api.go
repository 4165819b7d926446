// Package api is the reference server's HTTP and WebSocket surface
// (docs/protocol.md §3-§5): JSON or msgpack bodies, typed errors, bearer
// token and origin checks, and one writer goroutine per subscription.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/internal/forward"
	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/internal/signals"
	"github.com/agentsync/agentsync/synccore"
)

// Defaults of Config's zero fields (docs/protocol.md §5).
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultPingInterval = 20 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	wsReadLimit         = 4 << 10
)

// Config configures the handler.
type Config struct {
	Manager Manager
	Logger  *slog.Logger
	// Authorizer resolves every API request to a principal, the owner of
	// the sessions it creates and the only one who may use them (see
	// server/auth). Nil means auth.SharedToken(Token) when Token is set,
	// else auth.Open.
	Authorizer auth.Authorizer
	// Token, when set and Authorizer is nil, is required as
	// "Authorization: Bearer <token>" on every API request (or ?token= on
	// subscribe, for browsers).
	Token string
	// AllowedOrigins are browser origins allowed besides the server's own
	// host: "http://localhost:5173", "localhost:5173", or "*" for any.
	AllowedOrigins []string
	// MaxBodyBytes bounds request bodies; 0 means 1 MiB.
	MaxBodyBytes int64
	// Files, if set, serves the GET and HEAD requests outside the
	// protocol's routes (the demo page, the browser package at /js/), as
	// public files with CORS headers for the allowed origins.
	Files http.Handler
	// PingInterval and WriteTimeout of subscriptions; 0 means 20 s / 10 s.
	// The idle limit for a silent peer is two ping intervals plus the
	// write timeout.
	PingInterval time.Duration
	WriteTimeout time.Duration
	// Limits bound each client's request rate and subscriptions; zero
	// fields mean no bound.
	Limits Limits
	// Forward, if set, forwards a request that changes a session another
	// node serves to that node (forward.go); nil answers 409 conflict.
	Forward *forward.Client
	// Attachments, if set, serves the sessions' files and uploads (files.go).
	Attachments *FilesConfig
	// Observer sees every request, refusal and forward; nil observes
	// nothing.
	Observer obs.Observer
	// Tracer, if set, starts a span per request; nil traces nothing.
	Tracer obs.Tracer
	// Bus, if set, is the cluster's bus: a revoked share link or a
	// removed member ends its subscriptions on every node.
	Bus bus.Conn
	// Ready, if set, checks the server's dependencies (the store, the bus)
	// for GET /readyz, which also fails while draining.
	Ready func(ctx context.Context) []Check
	// Signals, if set, serves subscriptions that ask for signals
	// (?signals=1, docs/protocol.md §4.6) and hears of the forks made and
	// deleted here; nil: such a subscription gets none.
	Signals *signals.Hub
	// Lists, if set, serves GET /v1/sessions/subscribe, the live session
	// list (docs/protocol.md, "Session list").
	Lists *signals.Lists
}

// Handler serves the API; Drain refuses what comes after it.
type Handler struct {
	api  *api
	next http.Handler
}

// ServeHTTP serves one request, or answers 503 closed after Drain.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.probe(w, r) {
		return
	}
	if h.api.draining.Load() {
		h.api.obs.Request("none", http.StatusServiceUnavailable, 0)
		h.api.writeError(w, r, synccore.Errorf(synccore.CodeClosed, "the server is shutting down"))
		return
	}
	h.next.ServeHTTP(w, r)
}

// Drain makes every later request answer 503 closed; requests and
// subscriptions already running go on until the session manager ends them.
func (h *Handler) Drain() { h.api.draining.Store(true) }

// Draining reports whether Drain was called.
func (h *Handler) Draining() bool { return h.api.draining.Load() }

// Subscribers is the number of subscriptions open now (WebSocket and AI
// SDK streams).
func (h *Handler) Subscribers() int64 { return h.api.subscribers.Load() }

// api holds the handler's state; its methods are the endpoints.
type api struct {
	mgr          Manager
	log          *slog.Logger
	auth         auth.Authorizer
	origins      originPolicy
	maxBody      int64
	upgrader     wsUpgrader
	pingInterval time.Duration
	writeTimeout time.Duration
	pongWait     time.Duration

	rate           *rateLimiter // nil: no bound
	subsPerSession *counter
	subsPerClient  *counter
	draining       atomic.Bool
	subscribers    atomic.Int64

	obs    obs.Observer
	tracer obs.Tracer // nil: no spans
	ready  func(ctx context.Context) []Check

	signals *signals.Hub    // nil: no signals
	lists   *signals.Lists  // nil: no live session lists
	files   *files          // nil: no file routes
	fwd     *forward.Client // nil: no forwarding
	writes  http.Handler    // the sessionWrites endpoints, for requests forwarded here

	revoked revocations // subscriptions that shares and memberships gave
}

// New returns the server's handler. Unknown routes answer 404 not_found.
func New(cfg Config) *Handler {
	a := &api{
		mgr:          cfg.Manager,
		log:          cfg.Logger,
		auth:         authorizerOf(cfg),
		origins:      newOriginPolicy(cfg.AllowedOrigins),
		maxBody:      cfg.MaxBodyBytes,
		pingInterval: cfg.PingInterval,
		writeTimeout: cfg.WriteTimeout,

		rate:           newRateLimiter(cfg.Limits.RequestRate, cfg.Limits.RequestBurst),
		subsPerSession: newCounter(cfg.Limits.SubscribersPerSession),
		subsPerClient:  newCounter(cfg.Limits.SubscribersPerClient),
		fwd:            cfg.Forward,
		files:          newFiles(cfg.Attachments),
		obs:            obs.Or(cfg.Observer),
		tracer:         cfg.Tracer,
		ready:          cfg.Ready,
		signals:        cfg.Signals,
		lists:          cfg.Lists,
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.maxBody <= 0 {
		a.maxBody = DefaultMaxBodyBytes
	}
	if a.pingInterval <= 0 {
		a.pingInterval = DefaultPingInterval
	}
	if a.writeTimeout <= 0 {
		a.writeTimeout = DefaultWriteTimeout
	}
	a.pongWait = 2*a.pingInterval + a.writeTimeout
	a.upgrader = newGorillaUpgrader(wsReadLimit, a.upgradeFailed)
	a.revoked.conn = cfg.Bus
	if err := a.revoked.listen(); err != nil {
		a.log.Error("listen for revoked access", "err", err)
	}
	return &Handler{api: a, next: a.observed(a.recoverPanics(a.routes(cfg)))}
}
