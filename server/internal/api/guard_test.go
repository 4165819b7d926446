package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentsync/agentsync/server/auth"
)

func TestOriginPolicy(t *testing.T) {
	cases := []struct {
		allowed []string
		host    string
		origin  string
		want    bool
	}{
		{nil, "127.0.0.1:8080", "", true},                      // not a browser
		{nil, "127.0.0.1:8080", "http://127.0.0.1:8080", true}, // same host
		{nil, "127.0.0.1:8080", "http://evil.example", false},  // cross site
		{nil, "127.0.0.1:8080", "null", false},                 // opaque origin
		{[]string{"http://localhost:5173"}, "x:1", "http://localhost:5173", true},
		{[]string{"http://localhost:5173/"}, "x:1", "HTTP://LOCALHOST:5173", true},
		{[]string{"http://localhost:5173"}, "x:1", "https://localhost:5173", false},
		{[]string{"localhost:5173"}, "x:1", "https://localhost:5173", true},
		{[]string{"*"}, "x:1", "http://evil.example", true},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "http://"+c.host+"/v1/sessions", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := newOriginPolicy(c.allowed).allows(r); got != c.want {
			t.Errorf("allowed=%v host=%s origin=%q: got %v want %v", c.allowed, c.host, c.origin, got, c.want)
		}
	}
}

func TestAuthorized(t *testing.T) {
	a := &api{auth: auth.SharedToken("s3cret"), log: slog.New(slog.DiscardHandler)}
	ok := func(r *http.Request, allowQuery bool) bool {
		_, err := a.authorize(r, allowQuery)
		return err == nil
	}
	r := httptest.NewRequest("GET", "/v1/sessions/x/subscribe?token=s3cret", nil)
	if ok(r, false) {
		t.Error("query token accepted where only the header is allowed")
	}
	if !ok(r, true) {
		t.Error("query token refused on subscribe")
	}
	r.Header.Set("Authorization", "Bearer wrong")
	if ok(r, true) {
		t.Error("a wrong header token must win over a right query token")
	}
	r.Header.Set("Authorization", "Bearer s3cret")
	if !ok(r, false) {
		t.Error("right header token refused")
	}
	open := &api{auth: authorizerOf(Config{}), log: slog.New(slog.DiscardHandler)}
	if _, err := open.authorize(httptest.NewRequest("GET", "/", nil), false); err != nil {
		t.Error("no token configured must allow everything")
	}
}
