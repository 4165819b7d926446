// Package stream holds what the model providers share: the Adapter that
// maps a provider's stream of deltas to engine events, the helpers that put
// the composed input in a provider's shape, and the classification of
// their failures.
package stream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/agentsync/agentsync/server/model"
)

// Classify turns an HTTP status (0: none, the request or the stream
// failed) and its error into an Error. 401/403 are final: the key is
// wrong, no retry helps. 408, 409, 429 and 5xx are worth another try, as is
// any network error.
func Classify(provider string, status int, err error) *model.Error {
	e := &model.Error{Provider: provider, Status: status, Err: err, Recoverable: true}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Recoverable = false
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests, status >= 500:
		e.Retryable = true
	case status == 0:
		var ne net.Error
		e.Retryable = errors.As(err, &ne) || errors.Is(err, model.ErrNoFinish) || isConnectionCut(err)
	}
	return e
}

// isConnectionCut: the server closed the connection mid-response.
func isConnectionCut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// Canceled reports whether err is the context's own end rather than a
// provider failure: the engine stopped the step.
func Canceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Cause(ctx)))
}
