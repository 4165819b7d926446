package api

import (
	"context"
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
		a.signals.Typing(r.PathValue("id"), presenceName(r.Context()), req.Typing)
	}
	w.WriteHeader(http.StatusNoContent)
}

// presenceName is who a request is in presence signals: its principal, or
// "share:" and the link's id for a share link (its principal is a hash of
// the token, which must not travel).
func presenceName(ctx context.Context) string {
	if g := grantOf(ctx); g.share != nil {
		return "share:" + g.share.ShareID
	}
	return principal(ctx)
}
