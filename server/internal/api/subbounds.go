package api

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// subscriberRetry is the Retry-After of a subscription refused for a
// bound: an open subscription ends only when its client leaves, so a
// client that retries at once would only be refused again.
const subscriberRetry = 5 * time.Second

// counter counts open subscriptions per key against a bound; max <= 0
// means no bound. Keys at zero are deleted, so it holds only keys with
// an open subscription.
type counter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newCounter(bound int) *counter { return &counter{max: bound, n: map[string]int{}} }

// acquire counts one more for key unless that passes the bound.
func (c *counter) acquire(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max > 0 && c.n[key] >= c.max {
		return false
	}
	c.n[key]++
	return true
}

func (c *counter) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key]--; c.n[key] <= 0 {
		delete(c.n, key)
	}
}

// admitSubscriber counts a new subscription of r against the bounds per
// session and per client, or answers 429 rate_limited. On success the
// caller must call the returned release when the subscription ends.
func (a *api) admitSubscriber(w http.ResponseWriter, r *http.Request, sessionID string) (release func(), ok bool) {
	client := clientKey(r)
	if !a.subsPerClient.acquire(client) {
		a.obs.RateLimited("subscribers_per_principal")
		a.refuse(w, r, subscriberRetry, "over %d open subscriptions per client", a.subsPerClient.max)
		return nil, false
	}
	if !a.subsPerSession.acquire(sessionID) {
		a.subsPerClient.release(client)
		a.obs.RateLimited("subscribers_per_session")
		a.refuse(w, r, subscriberRetry, "over %d open subscriptions of this session", a.subsPerSession.max)
		return nil, false
	}
	a.subscribers.Add(1)
	return func() {
		a.subscribers.Add(-1)
		a.subsPerSession.release(sessionID)
		a.subsPerClient.release(client)
	}, true
}

// subscribeBounded admits a new subscription of r (admitSubscriber) and
// opens it. On a refusal or an error it has answered w and ok is false;
// otherwise the caller closes sub, then calls release.
func (a *api) subscribeBounded(ctx context.Context, w http.ResponseWriter, r *http.Request, sessionID string) (sub subscriber, release func(), ok bool) {
	release, ok = a.admitSubscriber(w, r, sessionID)
	if !ok {
		return nil, nil, false
	}
	sub, err := a.openSub(ctx, sessionID)
	if err != nil {
		release()
		a.writeError(w, r, err)
		return nil, nil, false
	}
	return sub, release, true
}
