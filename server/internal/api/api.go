// Package api is the reference server's HTTP and WebSocket surface
// (docs/protocol.md §3-§5): JSON or msgpack bodies, typed errors, bearer
// token and origin checks, and one writer goroutine per subscription.
package api

import (
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentsync/agentsync/server/auth"
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
	// StaticFS, if set, is served at "/" (the demo page).
	StaticFS fs.FS
	// JSFS, if set, is served at "/js/" (the browser host package the demo
	// page imports).
	JSFS fs.FS
	// WASM, if set, is the client core module served at
	// "/js/agentsync.wasm", next to the scripts that load it.
	WASM []byte
	// PingInterval and WriteTimeout of subscriptions; 0 means 20 s / 10 s.
	// The idle limit for a silent peer is two ping intervals plus the
	// write timeout.
	PingInterval time.Duration
	WriteTimeout time.Duration
}

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
}

// New returns the server's handler. Unknown routes answer 404 not_found.
func New(cfg Config) http.Handler {
	a := &api{
		mgr:          cfg.Manager,
		log:          cfg.Logger,
		auth:         authorizerOf(cfg),
		origins:      newOriginPolicy(cfg.AllowedOrigins),
		maxBody:      cfg.MaxBodyBytes,
		pingInterval: cfg.PingInterval,
		writeTimeout: cfg.WriteTimeout,
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
	return a.recoverPanics(a.routes(cfg))
}
