package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/agentsync/agentsync/synccore"
)

// statusFor is the one place that maps a typed error code to its HTTP
// status (docs/protocol.md §3). Codes the table does not name are client
// errors of the model (400) unless they are internal.
func statusFor(code string) int {
	switch code {
	case synccore.CodeBadRequest, synccore.CodeMalformed, synccore.CodeUnknownPartType,
		synccore.CodeInvalidPart, synccore.CodeInvalidMessage, synccore.CodeUnknownEvent,
		synccore.CodeUnknownFrame, synccore.CodeSequenceChanged, synccore.CodeRevisionBackward:
		return http.StatusBadRequest
	case synccore.CodeUnauthorized:
		return http.StatusUnauthorized
	case synccore.CodeForbidden:
		return http.StatusForbidden
	case synccore.CodeNotFound:
		return http.StatusNotFound
	case synccore.CodeNotPending, synccore.CodeConflict, synccore.CodeDoneIsFinal:
		return http.StatusConflict
	case synccore.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case synccore.CodeClosed:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// asTyped turns any error into the typed error sent to the client. Errors
// that are not *synccore.Error are server bugs: the client gets a generic
// internal error and the detail goes to the log only.
func asTyped(err error) (*synccore.Error, bool) {
	var te *synccore.Error
	if errors.As(err, &te) {
		return te, true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return synccore.Errorf(synccore.CodeClosed, "request cancelled"), true
	}
	return synccore.Errorf(synccore.CodeInternal, "internal error"), false
}

// writeError answers with {code, message} in the encoding the client asked
// for and the status of the code.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	te, typed := asTyped(err)
	status := statusFor(te.Code)
	if !typed || status >= 500 {
		a.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Any("err", err))
	}
	a.writeValue(w, r, status, te)
}
