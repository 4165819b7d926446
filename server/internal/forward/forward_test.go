package forward

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/natsbus"
	"github.com/agentsync/agentsync/synccore"
)

// Every node name is one subject token of its own: no two names share a
// subject, and none has a character NATS reads as structure.
func TestSubjectIsOneTokenPerName(t *testing.T) {
	check := func(x, y string) bool {
		sx, sy := Subject(x), Subject(y)
		token := strings.TrimSuffix(strings.TrimPrefix(sx, subjectPrefix), ".req")
		return (x == y) == (sx == sy) && !strings.ContainsAny(token, ".*> \t\r\n") && len(token) >= len(x)
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"node-a", "agentsync.node.node-a.req"}, {"a.b", "agentsync.node.a_2eb.req"},
		{"a_2eb", "agentsync.node.a_5f2eb.req"}, {"*", "agentsync.node._2a.req"}} {
		if got := Subject(c[0]); got != c[1] {
			t.Errorf("Subject(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func connect(t *testing.T, maxPayload int32) bus.Conn {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, MaxPayload: maxPayload})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return natsbus.New(nc).Conn()
}

// handlerFunc adapts a function to Handler.
type handlerFunc func(ctx context.Context, req *Request) *Response

func (f handlerFunc) ServeForward(ctx context.Context, req *Request) *Response { return f(ctx, req) }

// A request and its answer cross NATS whole (random bodies, up to the
// payload limit); the owner's context ends with the sender's timeout; a
// request over the limit is too_large before it is sent; a slow owner is
// ErrTimeout; a closed responder is ErrUnreachable.
func TestRequestReply(t *testing.T) {
	nc := connect(t, 64<<10)
	ctxEnded := make(chan bool, 1)
	// The slow owner answers only once the sender has given up: its context
	// ends at the same deadline as the sender's wait, and an answer sent
	// then could still beat the sender's timer.
	gaveUp := make(chan struct{})
	r, err := Serve(nc, "owner", handlerFunc(func(ctx context.Context, req *Request) *Response {
		if req.Path == "/slow" {
			<-ctx.Done()
			ctxEnded <- true
			<-gaveUp
			return &Response{Status: 503}
		}
		return &Response{Status: 201, Header: map[string]string{"Content-Type": req.Header["Accept"]},
			Body: append([]byte(req.Principal+" "+req.From+" "), req.Body...)}
	}), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(nc, "sender", 300*time.Millisecond)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		body := make([]byte, rng.IntN(32<<10))
		for i := range body {
			body[i] = byte(rng.UintN(256))
		}
		resp, err := c.Forward(context.Background(), "owner", &Request{Principal: "p", Method: "POST", Path: "/x", Body: body,
			Header: map[string]string{"Accept": "application/msgpack"}})
		if err != nil || resp.Status != 201 || resp.Header["Content-Type"] != "application/msgpack" ||
			string(resp.Body) != "p sender "+string(body) {
			t.Fatalf("round trip of %d bytes: %v", len(body), err)
		}
	}
	_, err = c.Forward(context.Background(), "owner", &Request{Method: "POST", Path: "/x", Body: make([]byte, 65<<10)})
	if !errors.Is(err, &synccore.Error{Code: synccore.CodeTooLarge}) {
		t.Fatalf("over max_payload: %v", err)
	}
	start := time.Now()
	_, err = c.Forward(context.Background(), "owner", &Request{Method: "POST", Path: "/slow"})
	close(gaveUp)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("slow owner: %v", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("gave up after %s", took)
	}
	select {
	case <-ctxEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("the owner's context outlived the sender's timeout")
	}
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Forward(context.Background(), "owner", &Request{Method: "POST", Path: "/x"}); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("closed responder: %v", err)
	}
}
