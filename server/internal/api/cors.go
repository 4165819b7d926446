package api

import "net/http"

// allowOrigin adds the CORS response headers for a cross-origin caller the
// policy allows; same-origin and non-browser requests get them too, which
// is harmless. Vary: Origin keeps caches from serving one origin's answer
// to another.
func (a *api) allowOrigin(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || !a.origins.allows(r) {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	// A page may read when to come back after a 429 or 503 (the JS host's
	// send waits for it), an upload's offset and its file's URL, and a
	// file's range; a browser hides every other header from it.
	h.Set("Access-Control-Expose-Headers", exposeHeaders)
	h.Add("Vary", "Origin")
}

// publicFiles serves the package scripts and the module to any caller, and
// adds CORS headers for allowed origins: an app on another port (Vite on
// :5173, say) imports /js/*.js as module scripts and fetches
// /js/agentsync.wasm, both of which browsers check with CORS. An origin the
// policy does not allow still gets the bytes, without the headers, so its
// browser refuses them; nothing here is secret.
func (a *api) publicFiles(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.allowOrigin(w, r)
		next.ServeHTTP(w, r)
	})
}
