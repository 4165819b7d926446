package model

import (
	"errors"
	"fmt"
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
