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
