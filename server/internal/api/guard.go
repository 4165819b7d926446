package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/agentsync/agentsync/synccore"
)

// originPolicy decides which browser origins may call the API and open
// subscriptions. Requests without an Origin header (curl, Go hosts) are
// not browser cross-site requests and pass.
type originPolicy struct {
	all     bool
	origins map[string]bool // "scheme://host:port", lower case
	hosts   map[string]bool // "host:port" entries match any scheme
}

func newOriginPolicy(allowed []string) originPolicy {
	p := originPolicy{origins: map[string]bool{}, hosts: map[string]bool{}}
	for _, o := range allowed {
		o = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
		switch {
		case o == "":
		case o == "*":
			p.all = true
		case strings.Contains(o, "://"):
			p.origins[o] = true
		default:
			p.hosts[o] = true
		}
	}
	return p
}

// allows reports whether r's Origin may use the API: same host as the
// request by default, any listed origin, or anything with "*".
func (p originPolicy) allows(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || p.all {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.ToLower(u.Host)
	return host == strings.ToLower(r.Host) ||
		p.origins[strings.ToLower(u.Scheme)+"://"+host] || p.hosts[host]
}

// guard wraps an API handler with the origin check, CORS headers for
// allowed cross-origin callers, and the authorizer, whose principal the
// request's context then carries.
func (a *api) guard(allowQueryToken bool, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.origins.allows(r) {
			a.writeError(w, r, synccore.Errorf(synccore.CodeForbidden, "origin %q is not allowed", r.Header.Get("Origin")))
			return
		}
		a.allowOrigin(w, r)
		authed, err := a.authorize(r, allowQueryToken)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		next(w, authed)
	}
}

// preflight answers CORS preflight requests of allowed origins, so a UI
// served from another dev server (say Vite on :5173) can call the API.
func (a *api) preflight(w http.ResponseWriter, r *http.Request) {
	if !a.origins.allows(r) {
		a.writeError(w, r, synccore.Errorf(synccore.CodeForbidden, "origin %q is not allowed", r.Header.Get("Origin")))
		return
	}
	a.allowOrigin(w, r)
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PATCH, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Idempotency-Key, Range, "+uploadHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
