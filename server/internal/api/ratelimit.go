package api

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/synccore"
)

// Limits bound what one client may ask of the server (docs/protocol.md
// §5). Zero fields mean no bound: the library's defaults are set by the
// server package, so tests of the API alone are not throttled.
type Limits struct {
	// RequestRate is the sustained requests per second of one client,
	// RequestBurst how many it may send at once on top of an idle period.
	RequestRate  float64
	RequestBurst int
	// SubscribersPerSession and SubscribersPerClient bound the open
	// subscriptions of one session and of one client.
	SubscribersPerSession int
	SubscribersPerClient  int
}

// clientKey is what the limits count against: the principal, or, where
// every caller is the one shared principal (auth.Open, auth.SharedToken),
// the caller's IP address, so one busy client does not throttle the rest.
func clientKey(r *http.Request) string {
	if p := principal(r.Context()); p != auth.Shared {
		return "p:" + p
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// rateLimiter is a token bucket per client key. A bucket that has been
// idle long enough to refill completely is the same as a new one, so the
// sweep drops those: the map holds only recently active clients.
type rateLimiter struct {
	rate  rate.Limit
	burst int
	// refill is how long an empty bucket takes to fill up again.
	refill time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// sweepEvery bounds how often the sweep walks the map.
const sweepEvery = time.Minute

// newRateLimiter returns nil (no limit) unless both rate and burst are set.
func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	if perSecond <= 0 || burst <= 0 {
		return nil
	}
	return &rateLimiter{
		rate:    rate.Limit(perSecond),
		burst:   burst,
		refill:  time.Duration(float64(burst) / perSecond * float64(time.Second)),
		buckets: map[string]*bucket{},
	}
}

// allow takes one token of key's bucket, or says how long until one is
// there.
func (l *rateLimiter) allow(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > sweepEvery {
		l.sweep(now)
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.rate, l.burst)}
		l.buckets[key] = b
	}
	b.last = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now) // a refused request costs no token
		return false, d
	}
	return true, 0
}

func (l *rateLimiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.last) > l.refill {
			delete(l.buckets, k)
		}
	}
}

// limited refuses a request over its client's rate with 429 rate_limited
// and a Retry-After header (whole seconds, at least 1).
func (a *api) limited(next http.HandlerFunc) http.HandlerFunc {
	if a.rate == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ok, wait := a.rate.allow(clientKey(r), time.Now())
		if !ok {
			a.obs.RateLimited("requests")
			a.refuse(w, r, wait, "over %g requests per second (burst %d)", float64(a.rate.rate), a.rate.burst)
			return
		}
		next(w, r)
	}
}

// refuse answers 429 rate_limited with Retry-After.
func (a *api) refuse(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, format string, args ...any) {
	secs := max(1, int(math.Ceil(retryAfter.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	a.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", "rate_limited")
	a.writeError(w, r, synccore.Errorf(synccore.CodeRateLimited, format, args...))
}
