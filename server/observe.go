package server

import (
	"context"
	"net/http"
	"time"

	"github.com/agentsync/agentsync/server/internal/api"
	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/store"
)

// Observer receives the server's events, for metrics: server/metrics
// implements it with Prometheus collectors, and an app may implement it
// with its own (embed NopObserver to implement only some methods). The
// server calls it on its hot paths (every request, commit and model step,
// never once per delta): its methods must be cheap, must not block, and
// are called from many goroutines at once. Every label is from a bounded
// set: a route pattern, a status, a store or model name, a resync code, an
// outcome; never a session id or a principal.
type Observer interface {
	// Request: one HTTP request answered. route is the pattern it matched
	// ("POST /v1/sessions/{id}/messages", "GET /readyz"; "/" for files and
	// unknown routes, "none" for a request refused while draining),
	// status its status: 101 for a WebSocket subscription, whose d is how
	// long it stayed open.
	Request(route string, status int, d time.Duration)
	// RateLimited: a request or subscription refused 429 rate_limited, by
	// the limit it passed: "requests", "subscribers_per_session" or
	// "subscribers_per_principal".
	RateLimited(limit string)
	// Commit: one commit of a session's messages (a checkpoint) to the
	// store, named "sqlite", "postgres" or by its Go package; ok unless it
	// failed.
	Commit(store string, d time.Duration, ok bool)
	// Resync: one subscriber told to re-read the snapshot, by the resync
	// frame's code: "slow_consumer" (its queue overflowed: a slow-consumer
	// drop) or "owner_changed" (the node serving the session changed, or
	// the bus connection was lost).
	Resync(code string)
	// TurnStarted: a turn began on the session's model (its registry
	// name).
	TurnStarted(model string)
	// FirstToken: a model step's first text or reasoning delta arrived d
	// after the step's request was sent.
	FirstToken(model string, d time.Duration)
	// Tokens: a model step that streamed to its end produced tokens output
	// tokens (the provider's reported usage, else its number of deltas) in
	// d, from its first delta to its end.
	Tokens(model string, tokens int64, d time.Duration)
	// Forward: a request forwarded between cluster nodes. On the node
	// that forwards it, outcome "answered", "not_served" (the owner lost
	// the session meanwhile; claimed again), "unreachable" (no answer in
	// time) or "failed"; on the node that answers it, "received".
	Forward(outcome string)
	// LeaseAcquired: this node took a session's lease; takeover when it
	// took the session from a node that died or stalled with a message
	// streaming (which this node then closed with an "interrupted" part).
	LeaseAcquired(takeover bool)
	// LeaseRenewal: one renewal of a held lease, outcome "ok", "failed"
	// (the store unreachable; retried) or "lost" (another node took it).
	LeaseRenewal(outcome string)
}

// Tracer starts spans for Config.Tracer; server/tracing implements it
// with OpenTelemetry.
type Tracer interface {
	// Start begins a span named name, a child of ctx's span if it has
	// one, and returns ctx carrying it.
	Start(ctx context.Context, name string) (context.Context, Span)
}

// Span is one span a Tracer began. The server calls its methods from one
// goroutine at a time.
type Span interface {
	// SetName renames the span (a request's, once its route is known).
	SetName(name string)
	// SetString and SetInt set an attribute.
	SetString(key, value string)
	SetInt(key string, value int64)
	// End ends the span, failed with err unless err is nil.
	End(err error)
}

// tracer is a Tracer as the internals take it (the same methods, their
// Span type).
type tracer struct{ t Tracer }

func (t tracer) Start(ctx context.Context, name string) (context.Context, obs.Span) {
	return t.t.Start(ctx, name)
}

// TracePropagator is what a Tracer may also do (server/tracing's does):
// carry a span's context in request headers (W3C traceparent), so that a
// request forwarded to another node continues its trace there, and a
// request's span continues its caller's.
type TracePropagator interface {
	// Inject writes ctx's span context into h.
	Inject(ctx context.Context, h http.Header)
	// Extract returns ctx with the span context h names, if any.
	Extract(ctx context.Context, h http.Header) context.Context
}

// propagatingTracer is a tracer whose Tracer also propagates.
type propagatingTracer struct {
	tracer
	obs.Propagator
}

// tracerOf is t for the internals; nil for nil.
func tracerOf(t Tracer) obs.Tracer {
	if t == nil {
		return nil
	}
	if p, ok := t.(obs.Propagator); ok {
		return propagatingTracer{tracer{t}, p}
	}
	return tracer{t}
}

// NopObserver observes nothing; embed it in an Observer that implements
// only some of the methods.
type NopObserver = obs.Nop

// The server's Observer is the internals' obs.Observer: the same methods.
var (
	_ obs.Observer = Observer(nil)
	_ Observer     = obs.Observer(nil)
	// And its TracePropagator the internals' obs.Propagator.
	_ obs.Propagator  = TracePropagator(nil)
	_ TracePropagator = obs.Propagator(nil)
)

// Stats is a snapshot of the server's gauges (Server.Stats).
type Stats struct {
	// SessionsLoaded is how many sessions are in memory.
	SessionsLoaded int
	// TurnsRunning is how many turns are running.
	TurnsRunning int64
	// Subscribers is how many subscriptions (WebSocket and AI SDK
	// streams) are open.
	Subscribers int64
	// Draining: Close was called.
	Draining bool
	// Clustered: the server is a node of a cluster with a Transport;
	// TransportConnected then says whether its connection (NATS) is up.
	Clustered          bool
	TransportConnected bool
}

// Stats returns the server's gauges now. It is cheap: a metrics scrape may
// call it every time.
func (s *Server) Stats() Stats {
	st := Stats{
		SessionsLoaded: s.mgr.Loaded(),
		TurnsRunning:   s.mgr.Running(),
		Subscribers:    s.handler.Subscribers(),
		Draining:       s.handler.Draining(),
	}
	if s.conn != nil {
		st.Clustered = true
		st.TransportConnected = s.conn.Connected()
	}
	return st
}

// Check is one readiness check: "serving" (false while draining),
// "store", and with a cluster Transport, "transport".
type Check = api.Check

// Ready runs the readiness checks GET /readyz answers: ready only when
// every check is OK. ctx bounds them (and /readyz bounds them by 2 s).
func (s *Server) Ready(ctx context.Context) (ready bool, checks []Check) {
	h := s.handler.Ready(ctx)
	return h.OK, h.Checks
}

// readyChecks are the dependency checks of readiness: the store answers,
// and the transport, if any, is connected.
func (s *Server) readyChecks(ctx context.Context) []Check {
	c := Check{Name: "store", OK: true}
	if err := ping(ctx, s.store); err != nil {
		c.OK, c.Error = false, err.Error()
	}
	checks := []Check{c}
	if s.conn != nil {
		t := Check{Name: "transport", OK: s.conn.Connected()}
		if !t.OK {
			t.Error = "the cluster's transport (NATS) is not connected"
		}
		checks = append(checks, t)
	}
	return checks
}

// ping checks that st answers: its Ping, or for a store without one, a
// read of one session.
func ping(ctx context.Context, st store.Store) error {
	if p, ok := st.(store.Pinger); ok {
		return p.Ping(ctx)
	}
	_, err := st.ListSessions(ctx, 1)
	return err
}
