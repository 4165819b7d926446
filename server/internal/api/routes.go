package api

import (
	"net/http"
	"strings"

	"github.com/agentsync/agentsync/synccore"
)

// routes registers every endpoint of docs/protocol.md §3 with Go 1.22
// method patterns.
func (a *api) routes(cfg Config) *http.ServeMux {
	mux := http.NewServeMux()
	endpoint := func(h http.HandlerFunc) http.HandlerFunc { return a.guard(false, a.limited(h)) }
	mux.HandleFunc("POST /v1/sessions", endpoint(a.personal(a.createSession)))
	mux.HandleFunc("GET /v1/sessions", endpoint(a.personal(a.listSessions)))
	mux.HandleFunc("PATCH /v1/sessions/{id}", endpoint(a.can(levelOwn, a.renameSession)))
	mux.HandleFunc("GET /v1/sessions/{id}/messages", endpoint(a.can(levelRead, a.getMessages)))
	mux.HandleFunc("GET /v1/sessions/{id}/branches", endpoint(a.can(levelRead, a.getBranches)))
	mux.HandleFunc("GET /v1/sessions/{id}/alternatives", endpoint(a.can(levelRead, a.getAlternatives)))
	// Who else may use a session: share links and members (access.go).
	mux.HandleFunc("POST /v1/sessions/{id}/shares", endpoint(a.can(levelOwn, a.createShare)))
	mux.HandleFunc("GET /v1/sessions/{id}/shares", endpoint(a.can(levelOwn, a.listShares)))
	mux.HandleFunc("DELETE /v1/sessions/{id}/shares/{share_id}", endpoint(a.can(levelOwn, a.deleteShare)))
	mux.HandleFunc("GET /v1/sessions/{id}/members", endpoint(a.can(levelRead, a.listMembers)))
	mux.HandleFunc("PUT /v1/sessions/{id}/members/{principal}", endpoint(a.can(levelOwn, a.putMember)))
	mux.HandleFunc("DELETE /v1/sessions/{id}/members/{principal}", endpoint(a.can(levelOwn, a.deleteMember)))
	mux.HandleFunc("GET /v1/search", endpoint(a.personal(a.search)))
	// A fork is a new session, served by the node that makes it: it reads
	// only the parent's done prefix, so it is not one of the parent's
	// writes.
	mux.HandleFunc("POST /v1/sessions/{id}/fork", endpoint(a.can(levelOwn, a.forkSession)))
	// Typing is presence, not a write: any node takes it (§4.6).
	mux.HandleFunc("POST /v1/sessions/{id}/typing", endpoint(a.can(levelWrite, a.typing)))
	// The session writes, here and for the requests other nodes forward.
	writes := http.NewServeMux()
	for _, e := range a.sessionWrites() {
		mux.HandleFunc(e.pattern, endpoint(a.forwarding(a.can(e.level, e.handler))))
		writes.HandleFunc(e.pattern, a.can(e.level, e.handler))
	}
	writes.HandleFunc("/", a.noRoute)
	a.writes = a.recoverPanics(writes)
	// The upgrade takes the token from ?token= too: a browser cannot set
	// headers on it.
	mux.HandleFunc("GET /v1/sessions/subscribe", a.guard(true, a.limited(a.personal(a.subscribeSessions))))
	mux.HandleFunc("GET /v1/sessions/{id}/subscribe", a.guard(true, a.limited(a.can(levelRead, a.subscribe))))
	a.routeFiles(mux, endpoint)
	mux.HandleFunc("POST /v1/chat", endpoint(a.chatPost))
	mux.HandleFunc("GET /v1/chat/{id}/stream", endpoint(a.can(levelRead, a.chatResume)))
	mux.HandleFunc("POST /v1/agui", endpoint(a.aguiRun))
	// Health checks (load balancers, orchestrators) are not rate limited.
	mux.HandleFunc("GET /healthz", a.guard(false, a.healthz))
	mux.HandleFunc("OPTIONS /v1/", a.preflight)

	// The demo page and its scripts are public files: a browser cannot put
	// a bearer token on a page load. Allowed origins get CORS headers on
	// them (see publicFiles).
	files := http.Handler(nil)
	if cfg.Files != nil {
		files = a.publicFiles(cfg.Files)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if files != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			!strings.HasPrefix(r.URL.Path, "/v1/") {
			files.ServeHTTP(w, r)
			return
		}
		a.noRoute(w, r)
	})
	return mux
}

// sessionWrites are the endpoints that change a session under its lease:
// on a node that does not serve the session they are forwarded to the one
// that does (forward.go).
func (a *api) sessionWrites() []route {
	return []route{
		{"DELETE /v1/sessions/{id}", levelOwn, a.deleteSession},
		{"POST /v1/sessions/{id}/messages", levelWrite, a.postMessage},
		{"POST /v1/sessions/{id}/interactions/{interaction_id}", levelWrite, a.answer},
		{"POST /v1/sessions/{id}/actions", levelWrite, a.action},
		{"POST /v1/chat/{id}/stop", levelWrite, a.chatStop},
	}
}

type route struct {
	pattern string
	level   level // what checkAccess must allow
	handler http.HandlerFunc
}

func (a *api) noRoute(w http.ResponseWriter, r *http.Request) {
	a.writeError(w, r, synccore.Errorf(synccore.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
}

func (a *api) healthz(w http.ResponseWriter, r *http.Request) {
	a.writeValue(w, r, http.StatusOK, healthzBody)
}

var healthzBody = struct {
	OK bool `json:"ok" msgpack:"ok"`
}{OK: true}

// upgradeFailed answers a failed WebSocket handshake with a typed error
// instead of gorilla's plain text.
func (a *api) upgradeFailed(w http.ResponseWriter, r *http.Request, status int, reason error) {
	a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "websocket handshake: %v", reason))
}
