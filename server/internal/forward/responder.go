package forward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/synccore"
)

// Handler runs a forwarded request on the node that serves its session, as
// if it had arrived there from its client, and returns the answer.
type Handler interface {
	ServeForward(ctx context.Context, req *Request) *Response
}

// MaxInFlight bounds the forwarded requests one node runs at once; more
// wait in NATS's pending queue for this subscription (their senders time
// out if the wait is too long).
const MaxInFlight = 256

// Responder answers the requests forwarded to one node.
type Responder struct {
	sub    bus.Subscription
	h      Handler
	log    *slog.Logger
	limit  int64 // the connection's max payload, for the answers
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Serve answers, until Close, the requests forwarded to node over nc with
// h. It returns once the NATS server has the subscription, so requests
// forwarded from then on reach it.
func Serve(nc bus.Conn, node string, h Handler, log *slog.Logger) (*Responder, error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Responder{h: h, log: log.With("component", "forward"), limit: nc.MaxPayload(),
		ctx: ctx, cancel: cancel, slots: make(chan struct{}, MaxInFlight)}
	sub, err := nc.Subscribe(Subject(node), r.receive)
	if err == nil {
		fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
		err = nc.Flush(fctx)
		fcancel()
	}
	if err != nil {
		cancel()
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		return nil, fmt.Errorf("forward: subscribe to %s: %w", Subject(node), err)
	}
	r.sub = sub
	return r, nil
}

// receive runs on the subscription's one delivery goroutine: it hands each
// request to a goroutine of its own, at most MaxInFlight at once.
func (r *Responder) receive(msg *bus.Msg) {
	r.slots <- struct{}{}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.slots
		return // the sender finds no answer: its timeout, then a claim
	}
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer func() { <-r.slots }()
		r.answer(msg)
	}()
}

func (r *Responder) answer(msg *bus.Msg) {
	var req Request
	var resp *Response
	if err := decode(msg.Data, &req); err != nil {
		r.log.Error("undecodable forwarded request", "err", err)
		resp = errorResponse(synccore.Errorf(synccore.CodeMalformed, "the forwarded request does not decode: %v", err))
	} else {
		timeout := time.Duration(req.TimeoutMs) * time.Millisecond
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		ctx, cancel := context.WithTimeout(r.ctx, timeout)
		resp = r.h.ServeForward(ctx, &req)
		cancel()
	}
	data, err := encode(resp)
	if err == nil && r.limit > 0 && int64(len(data)) > r.limit {
		err = fmt.Errorf("answer of %d bytes over NATS max_payload %d", len(data), r.limit)
	}
	if err != nil {
		r.log.Error("forwarded request: cannot send the answer", "from", req.From, "path", req.Path, "err", err)
		data, _ = encode(errorResponse(synccore.Errorf(synccore.CodeInternal, "the answer of the node serving the session could not be sent back")))
	}
	if err := msg.Respond(data); err != nil {
		r.log.Warn("forwarded request: reply not sent", "from", req.From, "path", req.Path, "err", err)
	}
}

// errorResponse is a typed error answer the transport makes itself (the
// API makes every other one): JSON, which every client reads.
func errorResponse(te *synccore.Error) *Response {
	body, _ := json.Marshal(te)
	return &Response{Status: wire.HTTPStatus(te.Code),
		Header: map[string]string{"Content-Type": "application/json"}, Body: append(body, '\n')}
}

// Close stops taking forwarded requests and waits for those running (their
// contexts are cancelled when ctx ends first).
func (r *Responder) Close(ctx context.Context) error {
	err := r.sub.Unsubscribe()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.cancel()
		<-done
	}
	r.cancel()
	if err != nil && !errors.Is(err, bus.ErrClosed) {
		return fmt.Errorf("forward: unsubscribe: %w", err)
	}
	return nil
}
