package api

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/synccore"
)

// recoverPanics turns a handler panic into a logged 500 internal answer,
// so one bug never takes the server (and every session) down. At debug
// level it also logs every request.
func (a *api) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		if a.log.Enabled(r.Context(), slog.LevelDebug) {
			start := time.Now()
			defer func() {
				a.log.LogAttrs(r.Context(), slog.LevelDebug, "request",
					slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.Int("status", tw.status), slog.Duration("took", time.Since(start)))
			}()
		}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
				panic(v)
			}
			a.log.Error("handler panic", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !tw.wrote {
				a.writeValue(tw, r, http.StatusInternalServerError,
					synccore.Errorf(synccore.CodeInternal, "internal error"))
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// observed reports every request to the observer by the route pattern it
// matched (r.Pattern, which the mux sets on the request it is given) and
// its status, after next has answered it.
// With a Tracer, each request is a span named by its route, a child of
// the span a traceparent header names, if the Tracer reads it.
func (a *api) observed(next http.Handler) http.Handler {
	if _, nop := a.obs.(obs.Nop); nop && a.tracer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		began := time.Now()
		var span obs.Span
		if a.tracer != nil {
			ctx := r.Context()
			if p, ok := a.tracer.(obs.Propagator); ok {
				ctx = p.Extract(ctx, r.Header) // the caller's traceparent
			}
			ctx, span = a.tracer.Start(ctx, r.Method)
			r = r.WithContext(ctx)
		}
		defer func() {
			status := tw.status
			if status == 0 {
				status = http.StatusOK
			}
			route := r.Pattern
			if route == "" {
				route = "none"
			}
			a.obs.Request(route, status, time.Since(began))
			if span != nil {
				span.SetName(route)
				span.SetString("http.route", route)
				span.SetInt("http.response.status_code", int64(status))
				var err error
				if status >= 500 {
					err = errors.New(http.StatusText(status))
				}
				span.End(err)
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackingWriter notes whether the response has started, so a recovered
// panic does not write a second status line. It passes Hijack and Flush
// through (the WebSocket upgrade needs Hijack) via Unwrap.
type trackingWriter struct {
	http.ResponseWriter
	wrote  bool
	status int // for the debug log; 101 once hijacked
}

func (t *trackingWriter) WriteHeader(code int) {
	if !t.wrote {
		t.status = code
	}
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.status = http.StatusOK
	}
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Hijack hands the connection to the WebSocket upgrader (gorilla asserts
// http.Hijacker directly rather than using http.ResponseController).
func (t *trackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.wrote, t.status = true, http.StatusSwitchingProtocols
	return http.NewResponseController(t.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
