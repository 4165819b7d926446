// Package tracing traces an agentsync server with OpenTelemetry
// (go.opentelemetry.io/otel): a span per request, named by its route, and
// per turn, a child of the request that started it, with the turn's model
// steps and tool calls as its children. Spans go to an OTLP/HTTP
// collector configured by the standard OTEL_* environment variables. Only
// an app that imports this package links OpenTelemetry; the server package
// itself links none.
//
//	tr, err := tracing.FromEnv(ctx) // nil, nil unless OTEL_EXPORTER_OTLP_ENDPOINT is set
//	if tr != nil {
//		defer tr.Shutdown(context.Background())
//		cfg.Tracer = tr
//		handler = tracing.Handler(handler) // continue the callers' traceparent
//	}
package tracing

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentsync/agentsync/server"
)

// ScopeName is the instrumentation scope of the server's spans.
const ScopeName = "github.com/agentsync/agentsync/server"

// Tracer is a server.Tracer over an OpenTelemetry tracer provider.
type Tracer struct {
	tr       trace.Tracer
	shutdown func(context.Context) error
}

var _ server.Tracer = (*Tracer)(nil)

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise.
func Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") ||
		strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// FromEnv returns a Tracer exporting over OTLP/HTTP in batches, as the
// OTEL_* variables configure it (the endpoint, headers, timeout,
// compression, OTEL_SERVICE_NAME, whose default here is "agentsync",
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER), or nil and no error when
// tracing is off (Enabled). Shutdown flushes it.
func FromEnv(ctx context.Context) (*Tracer, error) {
	if !Enabled() {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "agentsync")),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{tr: tp.Tracer(ScopeName), shutdown: tp.Shutdown}, nil
}

// New returns a Tracer over tp (an app's own provider); its Shutdown does
// nothing, the app shuts tp down.
func New(tp trace.TracerProvider) *Tracer {
	return &Tracer{tr: tp.Tracer(ScopeName), shutdown: func(context.Context) error { return nil }}
}

// Shutdown flushes the spans not yet exported and stops the exporter
// FromEnv made.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.shutdown(ctx) }

// Start implements server.Tracer.
func (t *Tracer) Start(ctx context.Context, name string) (context.Context, server.Span) {
	kind := trace.SpanKindInternal
	if name == http.MethodGet || name == http.MethodPost || name == http.MethodPatch ||
		name == http.MethodDelete || name == http.MethodHead || name == http.MethodOptions {
		kind = trace.SpanKindServer // a request's span, renamed by its route
	}
	ctx, sp := t.tr.Start(ctx, name, trace.WithSpanKind(kind))
	return ctx, span{sp}
}

type span struct{ s trace.Span }

func (s span) SetName(name string)            { s.s.SetName(name) }
func (s span) SetString(key, value string)    { s.s.SetAttributes(attribute.String(key, value)) }
func (s span) SetInt(key string, value int64) { s.s.SetAttributes(attribute.Int64(key, value)) }
func (s span) End(err error) {
	if err != nil {
		s.s.RecordError(err)
		s.s.SetStatus(codes.Error, err.Error())
	}
	s.s.End()
}

// Inject implements the server's trace propagation (a forwarded request
// carries its caller's span as traceparent).
func (t *Tracer) Inject(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// Extract continues the trace h's traceparent names.
func (t *Tracer) Extract(ctx context.Context, h http.Header) context.Context {
	if h.Get("Traceparent") == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
}

// LogHandler adds the trace_id and span_id of the span in a record's
// context to every record logged with one (slog's ...Context calls): a
// turn's failures and a forward's are found in the logs from the trace,
// and the trace from the logs.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(as)}
}
func (l logHandler) WithGroup(name string) slog.Handler { return logHandler{l.Handler.WithGroup(name)} }

// Handler continues the trace a request's W3C traceparent header names:
// the server's span for the request becomes a child of the caller's.
func Handler(next http.Handler) http.Handler {
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			r = r.WithContext(prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		next.ServeHTTP(w, r)
	})
}
