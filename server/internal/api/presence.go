package api

import (
	"net/http"

	"github.com/agentsync/agentsync/httpwire"
)

// typing: POST /v1/sessions/{id}/typing {"typing": true|false}: the
// principal is typing in the session (or stopped), told to its subscribers
// as presence (docs/protocol.md §4.6); it lapses after a few seconds
// unless said again. Answers 204; without signals it does nothing.
func (a *api) typing(w http.ResponseWriter, r *http.Request) {
	var req httpwire.TypingRequest
	if err := a.decodeBody(w, r, &req); err != nil {
		a.writeError(w, r, err)
		return
	}
	if a.signals != nil {
		a.signals.Typing(r.PathValue("id"), principal(r.Context()), req.Typing)
	}
	w.WriteHeader(http.StatusNoContent)
}
