package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/synccore"
)

type principalKey struct{}

// principal is who the request acts for, set by guard.
func principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// bearerToken reads "Authorization: Bearer <token>", or where a browser
// cannot set headers (the WebSocket upgrade) the ?token= parameter.
func bearerToken(r *http.Request, allowQuery bool) string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return tok
	}
	if allowQuery {
		return r.URL.Query().Get("token")
	}
	return ""
}

// authorize resolves r to its principal; the refusal is 401 with a
// message that names neither the token nor why a signature failed (the
// log has the reason, without the token).
func (a *api) authorize(r *http.Request, allowQuery bool) (*http.Request, error) {
	if tok := shareToken(r, allowQuery); tok != "" {
		return a.authorizeShare(r, tok)
	}
	p, err := a.auth.Authorize(r, bearerToken(r, allowQuery))
	if err == nil && strings.HasPrefix(p, "\x00") {
		err = errors.New("the authorizer answered a principal that starts with NUL (reserved for share links)")
	}
	if err != nil {
		a.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err)
		return nil, synccore.Errorf(synccore.CodeUnauthorized, "missing or wrong bearer token")
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p)), nil
}

// Who may use a session besides its owner, and how a session of another
// principal is refused (404, as an unknown one): checkAccess (access.go).

// authorizerOf is cfg's Authorizer, else the shared token, else open.
func authorizerOf(cfg Config) auth.Authorizer {
	switch {
	case cfg.Authorizer != nil:
		return cfg.Authorizer
	case cfg.Token != "":
		return auth.SharedToken(cfg.Token)
	}
	return auth.Open
}
