package api

import (
	"net/http/httptest"
	"testing"
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
	a := &api{token: "s3cret"}
	r := httptest.NewRequest("GET", "/v1/sessions/x/subscribe?token=s3cret", nil)
	if a.authorized(r, false) {
		t.Error("query token accepted where only the header is allowed")
	}
	if !a.authorized(r, true) {
		t.Error("query token refused on subscribe")
	}
	r.Header.Set("Authorization", "Bearer wrong")
	if a.authorized(r, true) {
		t.Error("a wrong header token must win over a right query token")
	}
	r.Header.Set("Authorization", "Bearer s3cret")
	if !a.authorized(r, false) {
		t.Error("right header token refused")
	}
	if !(&api{}).authorized(httptest.NewRequest("GET", "/", nil), false) {
		t.Error("no token configured must allow everything")
	}
}
