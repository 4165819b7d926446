// Package obs is how the server's internals report what they do to an
// observer (server.Observer; server/metrics implements it with Prometheus
// collectors). It imports nothing outside the standard library, so the
// server package links no metrics library. Every label an internal passes
// is from a bounded set: a route pattern, a status, a store or model name,
// a resync code, an outcome; never a session id.
package obs

import (
	"context"
	"net/http"
	"path"
	"reflect"
	"time"
)

// Observer receives the server's events. Its methods are called on hot
// paths (every request, commit and model step; never per delta) and must
// be cheap and safe for concurrent use.
type Observer interface {
	// Request: one HTTP request answered; route is the pattern it matched
	// ("POST /v1/sessions/{id}/messages"; "/" for files and unknown
	// routes), status its status (101 for an upgraded subscription, then
	// d is how long the subscription lasted).
	Request(route string, status int, d time.Duration)
	// RateLimited: a request or subscription refused 429 rate_limited;
	// limit is "requests", "subscribers_per_session" or
	// "subscribers_per_principal".
	RateLimited(limit string)
	// Commit: one commit of a session's messages to the store ("sqlite",
	// "postgres", or the store's package name), ok unless it failed.
	Commit(store string, d time.Duration, ok bool)
	// Resync: one subscriber told to re-read the snapshot, by the resync
	// frame's code ("slow_consumer", "owner_changed").
	Resync(code string)
	// TurnStarted: a turn began (model: the session's model at its start).
	TurnStarted(model string)
	// FirstToken: a model step's first text or reasoning delta came d
	// after the step's request.
	FirstToken(model string, d time.Duration)
	// Tokens: a model step produced tokens output tokens (the provider's
	// usage, else its count of deltas) in d from its first delta.
	Tokens(model string, tokens int64, d time.Duration)
	// Forward: a request forwarded between nodes; outcome "answered",
	// "not_served", "unreachable", "failed" on the sending node,
	// "received" on the node that answers it.
	Forward(outcome string)
	// LeaseAcquired: this node took a session's lease; takeover when it
	// took it from a node that died or stalled with a message streaming
	// (which this node then closed, "interrupted").
	LeaseAcquired(takeover bool)
	// LeaseRenewal: one renewal of a lease: outcome "ok", "failed" (the
	// store unreachable) or "lost" (another node took the lease).
	LeaseRenewal(outcome string)
}

// Nop observes nothing.
type Nop struct{}

func (Nop) Request(string, int, time.Duration)  {}
func (Nop) RateLimited(string)                  {}
func (Nop) Commit(string, time.Duration, bool)  {}
func (Nop) Resync(string)                       {}
func (Nop) TurnStarted(string)                  {}
func (Nop) FirstToken(string, time.Duration)    {}
func (Nop) Tokens(string, int64, time.Duration) {}
func (Nop) Forward(string)                      {}
func (Nop) LeaseAcquired(bool)                  {}
func (Nop) LeaseRenewal(string)                 {}

// Or is o, or Nop when o is nil.
func Or(o Observer) Observer {
	if o == nil {
		return Nop{}
	}
	return o
}

// StoreName names a store by its package: "sqlite" for *sqlite.Store,
// "postgres" for *postgres.Store, "none" for nil.
func StoreName(st any) string {
	t := reflect.TypeOf(st)
	if t == nil {
		return "none"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	p := t.PkgPath()
	if p == "" {
		return t.String()
	}
	return path.Base(p)
}

// Tracer starts spans; server/tracing implements it with OpenTelemetry.
type Tracer interface {
	// Start begins a span named name, a child of ctx's span if it has
	// one, and returns ctx carrying it.
	Start(ctx context.Context, name string) (context.Context, Span)
}

// Propagator is what a Tracer may also do: carry a span's context in
// request headers (W3C traceparent), so that a request forwarded to
// another node continues the trace there.
type Propagator interface {
	// Inject writes ctx's span context into h.
	Inject(ctx context.Context, h http.Header)
	// Extract returns ctx with the span context h names, if any.
	Extract(ctx context.Context, h http.Header) context.Context
}

// Span is one span Tracer.Start began.
type Span interface {
	// SetName renames the span (a request's, once its route is known).
	SetName(name string)
	// SetString and SetInt set an attribute.
	SetString(key, value string)
	SetInt(key string, value int64)
	// End ends the span, failed with err unless err is nil.
	End(err error)
}
