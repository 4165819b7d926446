package bindings

import (
	"errors"

	"github.com/agentsync/agentsync/synccore"
)

// errClosed is returned by a client used after Close.
var errClosed = synccore.Errorf(synccore.CodeClosed, "closed")

// isBroken reports whether err means the core must be rebuilt: its code is
// core_broken, and nothing else is (core.ErrBroken).
func isBroken(err error) bool { return errors.Is(err, synccore.ErrCoreBroken) }

// CodeNetwork is the code of a request or a subscription that got no answer
// from the server: the connection was refused or cut, the name did not
// resolve, TLS failed. A host reports it (never a server); it is
// retryable. See docs/protocol.md §7.
const CodeNetwork = "network"

// ErrNetwork matches every *NetworkError with errors.Is.
var ErrNetwork = &synccore.Error{Code: CodeNetwork, Message: "the server could not be reached"}

// NetworkError is a request or a subscription that got no answer: it may
// or may not have reached the server. errors.Is(err, ErrNetwork) holds for
// it, and errors.Unwrap gives the transport's own error (a *net.OpError, a
// *net.DNSError...).
type NetworkError struct{ err error }

func (e *NetworkError) Error() string { return CodeNetwork + ": " + e.err.Error() }
func (e *NetworkError) Unwrap() error { return e.err }

// Is matches ErrNetwork (any *synccore.Error with code network).
func (e *NetworkError) Is(target error) bool {
	t, ok := target.(*synccore.Error)
	return ok && t.Code == CodeNetwork
}

// Code is CodeNetwork.
func (e *NetworkError) Code() string { return CodeNetwork }

// Retryable reports whether trying the same thing again later may succeed:
// a network failure, a refusal for now (rate_limited, closed: a draining or
// unsure server), a timeout. not_found, unauthorized, forbidden and the
// request's own faults (bad_request...) are not: they stay as they are
// until something else changes.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNetwork) {
		return true
	}
	var se *synccore.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case synccore.CodeRateLimited, synccore.CodeClosed, synccore.CodeTimeout, synccore.CodeInternal:
		return true
	}
	return false
}

// terminal reports whether a connection failure ends the client: the
// session is gone (not_found), or the server refuses who we are
// (unauthorized, forbidden) and no token source gave a new token.
func terminal(err error) bool {
	return errors.Is(err, synccore.ErrNotFound) || errors.Is(err, synccore.ErrUnauthorized) ||
		errors.Is(err, synccore.ErrForbidden)
}
