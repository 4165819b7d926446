package tracing_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/server/tracing"
)

// receiver is an in-process OTLP/HTTP trace collector.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	svc   []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	data, _ := io.ReadAll(body)
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				rc.svc = append(rc.svc, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if sv := a.GetValue().GetStringValue(); sv != "" {
				return sv
			}
			return strings.TrimSpace(a.GetValue().String())
		}
	}
	return ""
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a turn over HTTP reaches an OTLP
// receiver as spans: the post's request span (a child of the caller's
// traceparent), the turn under it, and the turn's model steps and tool
// calls under the turn, all in the caller's trace.
func TestTurnTrace(t *testing.T) {
	rc := &receiver{}
	col := httptest.NewServer(rc)
	defer col.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "agentsync-test")
	if !tracing.Enabled() {
		t.Fatal("tracing not enabled by OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	ctx := context.Background()
	tr, err := tracing.FromEnv(ctx)
	if err != nil || tr == nil {
		t.Fatalf("FromEnv: %v %v", tr, err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agent.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := server.New(ctx, server.Config{Store: st, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(tracing.Handler(srv))
	defer api.Close()

	do := func(method, path, body string, hdr ...string) []byte {
		req, _ := http.NewRequestWithContext(ctx, method, api.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		c := &http.Client{Timeout: 10 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b
	}
	var sess struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(do("POST", "/v1/sessions", "{}"), &sess); err != nil {
		t.Fatal(err)
	}
	sid := sess.SessionID
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	do("POST", "/v1/sessions/"+sid+"/messages", `{"parts":[{"type":"text","text":"scenario:tools city=Oslo"}]}`,
		"Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	// The post started the turn before it answered: it is over once none
	// runs.
	deadline := time.Now().Add(20 * time.Second)
	for srv.Stats().TurnsRunning != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the turn did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if err := tr.Shutdown(cctx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	byName := map[string][]*tracepb.Span{}
	for _, s := range rc.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	if len(rc.svc) == 0 || rc.svc[0] != "agentsync-test" {
		t.Errorf("service.name %v, want agentsync-test (OTEL_SERVICE_NAME)", rc.svc)
	}
	posts := byName["POST /v1/sessions/{id}/messages"]
	turns := byName["turn"]
	if len(posts) != 1 || len(turns) != 1 {
		names := []string{}
		for n := range byName {
			names = append(names, n)
		}
		t.Fatalf("%d post spans, %d turn spans, want 1 and 1; spans: %v", len(posts), len(turns), names)
	}
	post, turn := posts[0], turns[0]
	if got := hex.EncodeToString(post.TraceId); got != traceID {
		t.Errorf("post span trace %s, want the caller's %s", got, traceID)
	}
	if got := hex.EncodeToString(post.ParentSpanId); got != "00f067aa0ba902b7" {
		t.Errorf("post span parent %s, want the caller's span", got)
	}
	if post.Kind != tracepb.Span_SPAN_KIND_SERVER || attr(post, "http.route") != "POST /v1/sessions/{id}/messages" {
		t.Errorf("post span kind %v route %q", post.Kind, attr(post, "http.route"))
	}
	if !bytes.Equal(turn.TraceId, post.TraceId) || !bytes.Equal(turn.ParentSpanId, post.SpanId) {
		t.Errorf("turn span is not the post's child")
	}
	if attr(turn, "agentsync.model") != "scripted" {
		t.Errorf("turn model %q", attr(turn, "agentsync.model"))
	}
	steps, tools := byName["model.step"], byName["tool"]
	if len(steps) < 2 || len(tools) < 1 {
		t.Fatalf("%d model steps and %d tool calls traced, want a tool loop", len(steps), len(tools))
	}
	for _, s := range append(steps, tools...) {
		if !bytes.Equal(s.TraceId, turn.TraceId) || !bytes.Equal(s.ParentSpanId, turn.SpanId) {
			t.Errorf("span %s is not the turn's child", s.Name)
		}
		if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("span %s failed: %s", s.Name, s.Status.Message)
		}
	}
	if attr(tools[0], "agentsync.tool") == "" {
		t.Error("tool span without its tool name")
	}
	for _, s := range rc.spans {
		for _, a := range s.Attributes {
			if strings.Contains(a.GetValue().GetStringValue(), sid) {
				t.Errorf("span %s attribute %s holds the session id", s.Name, a.Key)
			}
		}
	}
}

// A record logged with the context of a span carries its trace and span
// ids; one without a span carries neither.
func TestLogHandlerAddsTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&buf, nil))).With("node", "a")
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	ctx, span := tracing.New(tp).Start(context.Background(), "turn")
	log.WarnContext(ctx, "turn failed")
	span.End(nil)
	log.Warn("no span")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), buf.String())
	}
	var with, without map[string]any
	if json.Unmarshal([]byte(lines[0]), &with) != nil || json.Unmarshal([]byte(lines[1]), &without) != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	if id, _ := with["trace_id"].(string); len(id) != 32 || with["span_id"] == nil || with["node"] != "a" {
		t.Errorf("with a span: %v", with)
	}
	if _, ok := without["trace_id"]; ok {
		t.Errorf("without a span: %v", without)
	}
}
