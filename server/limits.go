package server

import (
	"math"
	"time"

	"github.com/agentsync/agentsync/server/internal/api"
)

// The defaults of Limits: what a zero field means.
const (
	DefaultRequestsPerSecond       = 20
	DefaultRequestBurst            = 100
	DefaultSubscribersPerSession   = 32
	DefaultSubscribersPerPrincipal = 64
	DefaultMaxBodyBytes            = 1 << 20
	DefaultQueueLimit              = 4096
	DefaultQueueBytes              = 16 << 20
	DefaultFoldBytes               = 64 << 10
	DefaultIdleTimeout             = 10 * time.Minute
	DefaultMaxLoaded               = 10000
	DefaultToolTimeout             = 60 * time.Second
	DefaultMaxToolOutput           = 32 << 10
	DefaultMaxSteps                = 32
	DefaultPingInterval            = 20 * time.Second
	DefaultWriteTimeout            = 10 * time.Second
)

// Limits bound the server's memory and work. Every field follows one
// rule: zero is the default named in its comment (the Default*
// constants), a negative value turns the bound off, a positive one is
// the bound. A client is a principal, or, where every caller is the one
// shared principal (auth.Open, auth.SharedToken), one IP address.
type Limits struct {
	// RequestsPerSecond is the sustained request rate of one client (a
	// token bucket; default 20/s). A request over it is answered 429
	// rate_limited with a Retry-After header. Health checks are not
	// counted; nor are requests refused before the limiter (bad origin,
	// 401). Negative: no rate limit.
	RequestsPerSecond float64
	// RequestBurst is how many requests a client may make at once after a
	// quiet spell (default 100). Negative: no rate limit, as a negative
	// RequestsPerSecond.
	RequestBurst int
	// SubscribersPerSession bounds the open subscriptions (WebSocket, and
	// AI SDK streams) of one session (default 32); one more is refused
	// before the upgrade, 429 rate_limited. Negative: no bound.
	SubscribersPerSession int
	// SubscribersPerPrincipal bounds the open subscriptions of one client
	// (default 64), as SubscribersPerSession. Negative: no bound.
	SubscribersPerPrincipal int
	// MaxBodyBytes bounds a request body (default 1 MiB); a larger one is
	// refused 413 too_large. Negative: no bound.
	MaxBodyBytes int64
	// QueueLimit bounds the frames queued for one subscriber (default
	// 4096); a subscriber that falls further behind is resynced.
	// Negative: no bound.
	QueueLimit int
	// QueueBytes bounds the delta text queued for one subscriber (default
	// 16 MiB), as QueueLimit. Negative: no bound.
	QueueBytes int
	// FoldBytes bounds a folded delta (default 64 KiB): deltas of one part
	// wait folded into one frame, so a long answer counts by its bytes.
	// Negative: no folding, every delta is delivered as the model
	// produced it, however far behind a subscriber is.
	FoldBytes int
	// IdleTimeout unloads a session from memory after that long with no
	// request, turn or subscriber (default 10 min). Negative: sessions
	// stay loaded until MaxLoaded pushes them out.
	IdleTimeout time.Duration
	// MaxLoaded caps the sessions in memory, least recently used idle ones
	// unloaded first (default 10000). Busy sessions are never unloaded.
	// Negative: no cap.
	MaxLoaded int
	// ToolTimeout bounds one tool run (default 60 s). Negative: no bound.
	ToolTimeout time.Duration
	// MaxToolOutput bounds a tool's output in bytes of JSON (default
	// 32 KiB); a larger one is cut. Negative: no bound.
	MaxToolOutput int
	// MaxSteps bounds the model steps of one turn (default 32): a runaway
	// tool loop ends the turn with an error. Negative: no bound.
	MaxSteps int
	// PingInterval is how often a subscription is pinged (default 20 s).
	// Negative: never.
	PingInterval time.Duration
	// WriteTimeout bounds one write to a subscriber (default 10 s).
	// Negative: no bound.
	WriteTimeout time.Duration
	// WriteInterval is the least time between two deliveries of a
	// session's frames to its subscribers: frames published meanwhile go
	// out together, a stream's deltas folded into one, so a viewer gets
	// one write per interval instead of one per delta. The default (0) is
	// automatic: the node's subscribers / fanout.WritesPerSecond (none
	// under 100 subscribers, 20 ms at 1,000, 200 ms at 10,000; at most
	// 250 ms), which keeps a node with thousands of viewers at the model's
	// pace (docs/server.md "Many viewers"). Positive: always that interval.
	// Negative: never, every batch delivered at once.
	WriteInterval time.Duration
}

// resolved are Limits with the defaults applied and "off" turned into the
// internal packages' spelling of it.
type resolved struct {
	client                     api.Limits
	MaxBodyBytes               int64
	QueueLimit, QueueBytes     int
	FoldBytes                  int
	IdleTimeout                time.Duration // 0: keep loaded
	MaxLoaded                  int           // 0: no cap
	ToolTimeout                time.Duration
	MaxToolOutput, MaxSteps    int
	PingInterval, WriteTimeout time.Duration
	WriteInterval              time.Duration
}

// forever stands for "no bound" on a duration the internals always apply.
const forever = time.Duration(math.MaxInt64 / 4)

func pick[T int | int64 | float64 | time.Duration](v, def, off T) T {
	switch {
	case v < 0:
		return off
	case v == 0:
		return def
	}
	return v
}

// resolve applies the defaults of l.
func (l Limits) resolve() resolved {
	return resolved{
		client: api.Limits{ // 0 is "no bound" to the API
			RequestRate:           pick(l.RequestsPerSecond, DefaultRequestsPerSecond, 0),
			RequestBurst:          pick(l.RequestBurst, DefaultRequestBurst, 0),
			SubscribersPerSession: pick(l.SubscribersPerSession, DefaultSubscribersPerSession, 0),
			SubscribersPerClient:  pick(l.SubscribersPerPrincipal, DefaultSubscribersPerPrincipal, 0),
		},
		MaxBodyBytes:  pick(l.MaxBodyBytes, DefaultMaxBodyBytes, math.MaxInt64),
		QueueLimit:    pick(l.QueueLimit, DefaultQueueLimit, math.MaxInt),
		QueueBytes:    pick(l.QueueBytes, DefaultQueueBytes, math.MaxInt),
		FoldBytes:     pick(l.FoldBytes, DefaultFoldBytes, -1),
		IdleTimeout:   pick(l.IdleTimeout, DefaultIdleTimeout, 0),
		MaxLoaded:     pick(l.MaxLoaded, DefaultMaxLoaded, 0),
		ToolTimeout:   pick(l.ToolTimeout, DefaultToolTimeout, forever),
		MaxToolOutput: pick(l.MaxToolOutput, DefaultMaxToolOutput, math.MaxInt),
		MaxSteps:      pick(l.MaxSteps, DefaultMaxSteps, math.MaxInt),
		PingInterval:  pick(l.PingInterval, DefaultPingInterval, forever),
		WriteTimeout:  pick(l.WriteTimeout, DefaultWriteTimeout, forever),
		WriteInterval: pick(l.WriteInterval, 0, -1),
	}
}
