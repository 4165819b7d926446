package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

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
	if routedElsewhere(r, err) {
		return
	}
	var later interface{ RetryAfter() time.Duration }
	if errors.As(err, &later) {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(later.RetryAfter().Seconds()+0.999))))
	}
	te, typed := asTyped(err)
	status := wire.HTTPStatus(te.Code) // the one table: synccore/errcodes.go
	if !typed || status >= 500 {
		a.log.LogAttrs(r.Context(), slog.LevelError, "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Any("err", err))
	}
	a.writeValue(w, r, status, te)
}
