package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// routes registers every endpoint of docs/protocol.md §3 with Go 1.22
// method patterns.
func (a *api) routes(cfg Config) *http.ServeMux {
	mux := http.NewServeMux()
	endpoint := func(h http.HandlerFunc) http.HandlerFunc { return a.guard(false, a.limited(h)) }
	mux.HandleFunc("POST /v1/sessions", endpoint(a.createSession))
	mux.HandleFunc("GET /v1/sessions", endpoint(a.listSessions))
	mux.HandleFunc("PATCH /v1/sessions/{id}", endpoint(a.owned(a.renameSession)))
	mux.HandleFunc("GET /v1/sessions/{id}/messages", endpoint(a.owned(a.getMessages)))
	// The session writes, here and for the requests other nodes forward.
	writes := http.NewServeMux()
	for _, e := range a.sessionWrites() {
		mux.HandleFunc(e.pattern, endpoint(a.forwarding(a.owned(e.handler))))
		writes.HandleFunc(e.pattern, a.owned(e.handler))
	}
	writes.HandleFunc("/", a.noRoute)
	a.writes = a.recoverPanics(writes)
	// The upgrade takes the token from ?token= too: a browser cannot set
	// headers on it.
	mux.HandleFunc("GET /v1/sessions/{id}/subscribe", a.guard(true, a.limited(a.owned(a.subscribe))))
	mux.HandleFunc("POST /v1/chat", endpoint(a.chatPost))
	mux.HandleFunc("GET /v1/chat/{id}/stream", endpoint(a.owned(a.chatResume)))
	// Health checks (load balancers, orchestrators) are not rate limited.
	mux.HandleFunc("GET /healthz", a.guard(false, a.healthz))
	mux.HandleFunc("OPTIONS /v1/", a.preflight)

	// The demo page and its scripts are public files: a browser cannot put
	// a bearer token on a page load. Allowed origins get CORS headers on
	// them (see publicFiles).
	if cfg.JSFS != nil {
		mux.Handle("GET /js/", a.publicFiles(http.StripPrefix("/js/", http.FileServerFS(cfg.JSFS))))
	}
	if cfg.WASM != nil {
		mux.Handle("GET /js/agentsync.wasm", a.publicFiles(serveWASM(cfg.WASM)))
	}
	static := http.Handler(nil)
	if cfg.StaticFS != nil {
		static = http.FileServerFS(cfg.StaticFS)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if static != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			!strings.HasPrefix(r.URL.Path, "/v1/") {
			static.ServeHTTP(w, r)
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
		{"DELETE /v1/sessions/{id}", a.deleteSession},
		{"POST /v1/sessions/{id}/messages", a.postMessage},
		{"POST /v1/sessions/{id}/interactions/{interaction_id}", a.answer},
		{"POST /v1/sessions/{id}/actions", a.action},
	}
}

type route struct {
	pattern string
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

// serveWASM serves the module with the media type that
// WebAssembly.instantiateStreaming requires, and an ETag so a reload does
// not download it again.
func serveWASM(module []byte) http.HandlerFunc {
	sum := sha256.Sum256(module)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "agentsync.wasm", time.Time{}, bytes.NewReader(module))
	}
}
