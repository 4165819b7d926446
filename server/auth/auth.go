// Package auth resolves an API request to the principal it acts for: the
// owner of the sessions it creates and the only one who may read or change
// them (docs/protocol.md §3.1). The API calls an Authorizer on every
// request and on the WebSocket upgrade; built-ins are Open (no auth),
// SharedToken (one bearer token, one principal) and JWT (signed tokens, one
// principal per "sub").
package auth

import (
	"crypto/subtle"
	"errors"
	"net/http"
)

// Shared is the principal of Open and SharedToken: everyone who may use the
// server is the same user. Sessions created before per-user auth belong to
// it too.
const Shared = ""

// ErrUnauthorized is wrapped by every refusal of the built-ins; the API
// answers any Authorize error with 401 unauthorized. Messages never
// include the token.
var ErrUnauthorized = errors.New("unauthorized")

// Authorizer resolves a request to a principal, or refuses it.
type Authorizer interface {
	// Authorize returns the principal r acts for. token is the bearer token
	// ("Authorization: Bearer <token>", or the ?token= query parameter
	// where a browser cannot set headers: the subscribe upgrade), "" if
	// none. A non-nil error refuses the request with 401.
	Authorize(r *http.Request, token string) (principal string, err error)
}

// Func adapts a function to Authorizer.
type Func func(r *http.Request, token string) (string, error)

// Authorize calls f.
func (f Func) Authorize(r *http.Request, token string) (string, error) { return f(r, token) }

// Open lets every request in as the Shared principal.
var Open Authorizer = Func(func(*http.Request, string) (string, error) { return Shared, nil })

// SharedToken admits requests bearing token (compared in constant time) as
// the Shared principal.
func SharedToken(token string) Authorizer {
	want := []byte(token)
	return Func(func(_ *http.Request, got string) (string, error) {
		if got == "" || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			return "", errors.Join(ErrUnauthorized, errors.New("missing or wrong bearer token"))
		}
		return Shared, nil
	})
}
