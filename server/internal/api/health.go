package api

import (
	"context"
	"net/http"
	"time"
)

// Check is one dependency's state as readiness reports it.
type Check struct {
	Name  string `json:"name" msgpack:"name"`
	OK    bool   `json:"ok" msgpack:"ok"`
	Error string `json:"error,omitempty" msgpack:"error,omitempty"`
}

// readyTimeout bounds the checks of one readiness probe.
const readyTimeout = 2 * time.Second

// health is the body of /livez and /readyz.
type health struct {
	OK     bool    `json:"ok" msgpack:"ok"`
	Checks []Check `json:"checks,omitempty" msgpack:"checks,omitempty"`
}

// probe answers the load balancers' probes, GET or HEAD /livez and
// /readyz, before the drain check and without a token, origin check or
// rate limit: a probe carries no credentials and reads nothing of a
// session. ok is false for any other request.
func (h *Handler) probe(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	a := h.api
	began := time.Now()
	var route string
	status := http.StatusOK
	switch r.URL.Path {
	case "/livez":
		// Alive while it answers at all, draining included: restarting a
		// draining server would cut the turns it is closing.
		route = "GET /livez"
		a.writeValue(w, r, status, health{OK: true})
	case "/readyz":
		route = "GET /readyz"
		body := h.Ready(r.Context())
		if !body.OK {
			status = http.StatusServiceUnavailable
		}
		w.Header().Set("Cache-Control", "no-store")
		a.writeValue(w, r, status, body)
	default:
		return false
	}
	a.obs.Request(route, status, time.Since(began))
	return true
}

// Ready runs the readiness checks: not draining, then Config.Ready's
// (the store, the bus), within readyTimeout.
func (h *Handler) Ready(ctx context.Context) health {
	a := h.api
	serving := Check{Name: "serving", OK: !a.draining.Load()}
	if !serving.OK {
		serving.Error = "draining: the server is shutting down"
	}
	checks := []Check{serving}
	if a.ready != nil {
		ctx, cancel := context.WithTimeout(ctx, readyTimeout)
		checks = append(checks, a.ready(ctx)...)
		cancel()
	}
	ok := true
	for _, c := range checks {
		ok = ok && c.OK
	}
	return health{OK: ok, Checks: checks}
}
