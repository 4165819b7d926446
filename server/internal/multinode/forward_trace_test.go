package multinode

import (
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/tracing"
	"github.com/agentsync/agentsync/synccore"
)

// A post made on a node that does not serve the session is one trace
// across the two nodes: the caller's traceparent, the request's span on
// the receiving node, its "forward" span, the owner's span for the
// forwarded request under it, and the turn and its commits under that.
func TestForwardCarriesTheTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	traced := func(c *server.Config) { c.Tracer = tracing.New(tp) }
	db, ns := pg.Database(t), natstest.Start(t)
	a := startForwardingNode(t, db, "node-a", ns, traced)
	b := startForwardingNode(t, db, "node-b", ns, traced)
	sid := exchangeOn(t, a.node)

	const traceID = "5bf92f3577b34da6a3ce929d0e0e4737"
	got := b.send("POST", "/v1/sessions/"+sid+"/messages", postBody("traced via b"),
		map[string]string{"Traceparent": "00-" + traceID + "-00f067aa0ba902b8-01"})
	if got.status != http.StatusCreated {
		t.Fatalf("post on b: %d %s", got.status, got.body)
	}
	waitFor(t, 10*time.Second, "the turn on a", func() bool {
		h := a.history(sid)
		return len(h) == 4 && h[3].Role == synccore.RoleAgent && h[3].State == synccore.MessageDone
	})
	var forward, forwarded, turn sdktrace.ReadOnlySpan
	var commits int
	deadline := time.Now().Add(10 * time.Second)
	for !func() bool {
		forward, forwarded, turn, commits = nil, nil, nil, 0
		for _, s := range rec.Ended() {
			if s.SpanContext().TraceID().String() != traceID {
				continue
			}
			switch s.Name() {
			case "forward":
				forward = s
			case "forwarded POST":
				forwarded = s
			case "turn":
				turn = s
			case "commit":
				commits++
			}
		}
		return forward != nil && forwarded != nil && turn != nil && commits >= 2
	}() {
		if time.Now().After(deadline) {
			var names []string
			for _, s := range rec.Ended() {
				names = append(names, s.Name()+"@"+s.SpanContext().TraceID().String()[:6])
			}
			t.Fatalf("spans of the trace missing (%d commits); all spans: %s", commits, strings.Join(names, " "))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if forwarded.Parent().SpanID() != forward.SpanContext().SpanID() {
		t.Errorf("the owner's span's parent %s, want the forward span %s", forwarded.Parent().SpanID(), forward.SpanContext().SpanID())
	}
	if turn.Parent().SpanID() != forwarded.SpanContext().SpanID() {
		t.Errorf("the turn's parent %s, want the forwarded request's span", turn.Parent().SpanID())
	}
	// The forward hangs under b's span for the request, itself the
	// caller's child.
	var request sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanContext().SpanID() == forward.Parent().SpanID() {
			request = s
		}
	}
	if request == nil || request.Name() != "POST /v1/sessions/{id}/messages" || request.Parent().SpanID().String() != "00f067aa0ba902b8" {
		t.Errorf("the forward's parent is not b's span for the caller's request: %v", request)
	}
}
