package server_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/synccore"
)

// wantRateLimited fails unless a is 429 rate_limited with a Retry-After
// of at least one second.
func wantRateLimited(t *testing.T, what string, a answer) {
	t.Helper()
	if a.status != http.StatusTooManyRequests || a.err.Code != synccore.CodeRateLimited {
		t.Fatalf("%s: %d %+v, want 429 rate_limited", what, a.status, a.err)
	}
	if secs, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("%s: Retry-After %q, want whole seconds >= 1", what, a.header.Get("Retry-After"))
	}
}

// Each principal has its own token bucket: one over its rate is refused
// with 429 and Retry-After while the other goes on; health checks are not
// counted; after Retry-After the refused one is served again.
func TestRequestRatePerPrincipal(t *testing.T) {
	s := start(t, "", server.Config{Authorizer: byHeader, Limits: server.Limits{RequestsPerSecond: 2, RequestBurst: 3}})
	for i := range 3 {
		if a := s.call(nil, "alice", "GET", "/v1/sessions", ""); a.status != http.StatusOK {
			t.Fatalf("alice's request %d within the burst: %d %s", i, a.status, a.body)
		}
	}
	refused := s.call(nil, "alice", "GET", "/v1/sessions", "")
	wantRateLimited(t, "alice past her burst", refused)
	if a := s.call(nil, "alice", "POST", "/v1/sessions", "{}"); a.status != http.StatusTooManyRequests {
		t.Fatalf("alice creating a session past her burst: %d, want 429", a.status)
	}
	if a := s.call(nil, "bob", "GET", "/v1/sessions", ""); a.status != http.StatusOK {
		t.Fatalf("bob while alice is limited: %d %s", a.status, a.body)
	}
	if a := s.call(nil, "alice", "GET", "/healthz", ""); a.status != http.StatusOK {
		t.Fatalf("health check while limited: %d", a.status)
	}
	wait, _ := strconv.Atoi(refused.header.Get("Retry-After"))
	time.Sleep(time.Duration(wait) * time.Second)
	if a := s.call(nil, "alice", "GET", "/v1/sessions", ""); a.status != http.StatusOK {
		t.Fatalf("alice after Retry-After: %d %s", a.status, a.body)
	}
}

// Where everyone is the one shared principal (no per-user auth), the
// bucket is per client IP: one busy machine does not lock out the others.
func TestRequestRateSharedPrincipalPerIP(t *testing.T) {
	s := start(t, "", server.Config{Authorizer: auth.Open, Limits: server.Limits{RequestsPerSecond: 0.5, RequestBurst: 2}})
	one, two := fromIP("127.0.0.1"), fromIP("127.0.0.2")
	for range 2 {
		if a := s.call(one, "", "GET", "/v1/sessions", ""); a.status != http.StatusOK {
			t.Fatalf("127.0.0.1 within its burst: %d", a.status)
		}
	}
	wantRateLimited(t, "127.0.0.1 past its burst", s.call(one, "", "GET", "/v1/sessions", ""))
	if a := s.call(two, "", "GET", "/v1/sessions", ""); a.status != http.StatusOK {
		t.Fatalf("127.0.0.2 while 127.0.0.1 is limited: %d %s", a.status, a.body)
	}
}

// Subscriptions are bounded per session and per principal, refused before
// the upgrade (a plain typed 429), and a closed one frees its place.
func TestSubscriberBounds(t *testing.T) {
	s := start(t, "", server.Config{Authorizer: byHeader, Limits: server.Limits{
		RequestsPerSecond: -1, SubscribersPerSession: 2, SubscribersPerPrincipal: 3,
	}})
	s1, s2, bobs := s.createSession("alice"), s.createSession("alice"), s.createSession("bob")
	open := func(user, sid string) *websocket.Conn {
		t.Helper()
		c, a := s.subscribe(user, sid)
		if c == nil {
			t.Fatalf("%s subscribing %s: %d %+v", user, sid, a.status, a.err)
		}
		if frames, err := readFrames(c, 5*time.Second); err != nil || frames[0].Kind != synccore.FrameHello {
			t.Fatalf("%s: no hello on %s: %v", user, sid, err)
		}
		return c
	}
	first := open("alice", s1)
	open("alice", s1)
	_, a := s.subscribe("alice", s1)
	wantRateLimited(t, "a third subscriber of one session", a)
	open("alice", s2)
	_, a = s.subscribe("alice", s2)
	wantRateLimited(t, "a fourth subscriber of one principal", a)
	open("bob", bobs) // bob's bounds are his own

	// Closing one frees its place once the server has seen it go.
	_ = first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, a := s.subscribe("alice", s2)
		if c != nil {
			break
		}
		if a.status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("after closing one subscription: %d %+v", a.status, a.err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
