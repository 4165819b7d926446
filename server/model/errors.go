package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Error is a provider's failure, classified for the engine: whether the
// same request may succeed if sent again (Retryable, before anything
// streamed) and whether the turn can be retried by the user (Recoverable;
// false for a refused key, which no retry fixes).
type Error struct {
	Provider    string // "openai", "anthropic"
	Status      int    // HTTP status, 0 for a network or stream failure
	Retryable   bool   // the same request may succeed if sent again
	Recoverable bool   // the user may retry the turn
	Err         error  // the underlying failure
}

// Error says which provider failed, with what status, and why.
func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d %s: %v", e.Provider, e.Status, http.StatusText(e.Status), e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Provider, e.Err)
}

// Unwrap is the underlying failure.
func (e *Error) Unwrap() error { return e.Err }

// ErrNoFinish is the failure of a stream that ended without its finish
// event: the answer may be cut short, so it is never taken as complete.
var ErrNoFinish = errors.New("the stream ended without its finish event")

// classify turns an HTTP status (0: none, the request or the stream
// failed) and its error into an Error. 401/403 are final: the key is
// wrong, no retry helps. 408, 409, 429 and 5xx are worth another try, as is
// any network error.
func classify(provider string, status int, err error) *Error {
	e := &Error{Provider: provider, Status: status, Err: err, Recoverable: true}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Recoverable = false
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests, status >= 500:
		e.Retryable = true
	case status == 0:
		var ne net.Error
		e.Retryable = errors.As(err, &ne) || errors.Is(err, ErrNoFinish) || isConnectionCut(err)
	}
	return e
}

// isConnectionCut: the server closed the connection mid-response.
func isConnectionCut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// Canceled reports whether err is the context's own end rather than a
// provider failure: the engine stopped the step.
func canceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Cause(ctx)))
}
