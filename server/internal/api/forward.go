package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/agentsync/agentsync/server/internal/forward"
	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/synccore"
)

// Forwarding (docs/storage.md, Forwarding). In a cluster with NATS, an
// endpoint of sessionWrites runs as usual until the session engine refuses
// the lease claim with *session.OwnedElsewhere; writeError then leaves the
// answer to forwarding, which sends the request to that node and gives the
// client the owner's answer. The owner runs it through the same handlers
// (ServeForward), for the principal the forwarding node authenticated.

type routingKey struct{}

// routing is where one forwardable request found its session served.
type routing struct {
	forwarded bool                    // it came from another node: refuse, do not forward again
	elsewhere *session.OwnedElsewhere // the claim was refused: another node serves the session
}

// routedElsewhere is writeError's hook: it reports whether err is a refused
// claim that forwarding answers instead (nothing is written then).
func routedElsewhere(r *http.Request, err error) bool {
	rt, _ := r.Context().Value(routingKey{}).(*routing)
	var oe *session.OwnedElsewhere
	if rt == nil || !errors.As(err, &oe) {
		return false
	}
	rt.elsewhere = oe
	return !rt.forwarded
}

// forwarding wraps an endpoint of sessionWrites on a node with a forward
// client. The request runs here; if another node serves the session it is
// forwarded there. If that fails (the owner is unreachable, too slow, or no
// longer serves the session), the request runs here once more, after the
// failed owner's lease lapses: this node may take the session over, or
// forward to its new owner; else the client gets 503 closed with
// Retry-After. A post forwarded without an Idempotency-Key gets one, so
// that second try cannot post twice.
func (a *api) forwarding(next http.HandlerFunc) http.HandlerFunc {
	if a.fwd == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		body := &keptBody{ReadCloser: r.Body}
		r.Body = body
		var failedNode string
		for attempt := 1; ; attempt++ {
			rt := &routing{}
			next(w, r.WithContext(context.WithValue(r.Context(), routingKey{}, rt)))
			oe := rt.elsewhere
			if oe == nil {
				return // answered here
			}
			if oe.Node == failedNode {
				a.writeUnreachable(w, r, oe)
				return
			}
			if r.Header.Get("Idempotency-Key") == "" {
				r.Header.Set("Idempotency-Key", newForwardKey())
			}
			resp, err := a.forwardTraced(r.Context(), oe.Node, a.forwardRequest(r, body.kept.Bytes()))
			switch {
			case err == nil && (!resp.NotServed || attempt > 1):
				a.obs.Forward("answered")
				writeForwarded(w, resp)
				return
			case err == nil: // the owner lost the session meanwhile: claim it again
				a.obs.Forward("not_served")
			case errors.Is(err, forward.ErrUnreachable) || errors.Is(err, forward.ErrTimeout):
				a.obs.Forward("unreachable")
				a.log.WarnContext(r.Context(), "forward failed", "session_id", oe.SessionID, "owner", oe.Node, "attempt", attempt, "err", err)
				if attempt > 1 || !a.awaitLapse(r.Context(), oe) {
					a.writeUnreachable(w, r, oe)
					return
				}
				failedNode = oe.Node
			default:
				a.obs.Forward("failed")
				a.writeError(w, r, err)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body.kept.Bytes()))
		}
	}
}

// awaitLapse waits until the unreachable owner's lease lapses (by this
// node's clock, the store's as of the refusal), at most one forward
// timeout; false if the client gave up first.
func (a *api) awaitLapse(ctx context.Context, oe *session.OwnedElsewhere) bool {
	wait := min(time.Until(oe.Expires), a.fwd.Timeout())
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// writeUnreachable answers a request whose session's owner neither
// answered nor let its lease lapse: 503 closed, Retry-After until the
// lease's expiry as last seen.
func (a *api) writeUnreachable(w http.ResponseWriter, r *http.Request, oe *session.OwnedElsewhere) {
	setRetryAfterLease(w, oe)
	a.writeError(w, r, synccore.Errorf(synccore.CodeClosed,
		"session %q is served by node %q, which did not answer this node (%q) in time; retry", oe.SessionID, oe.Node, a.fwd.Node()))
}

// setRetryAfterLease tells the client to retry once oe's lease, as last
// seen, has expired (at least 1 s).
func setRetryAfterLease(w http.ResponseWriter, oe *session.OwnedElsewhere) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(time.Until(oe.Expires).Seconds()+0.999))))
}

// forwardTraced forwards req to node under a "forward" span, the owner's
// span for the request its child (the traceparent the request carries).
func (a *api) forwardTraced(ctx context.Context, node string, req *forward.Request) (*forward.Response, error) {
	if a.tracer == nil {
		return a.fwd.Forward(ctx, node, req)
	}
	ctx, span := a.tracer.Start(ctx, "forward")
	span.SetString("agentsync.node", node)
	if p, ok := a.tracer.(obs.Propagator); ok {
		h := http.Header{}
		p.Inject(ctx, h)
		for _, k := range []string{"Traceparent", "Tracestate"} {
			if v := h.Get(k); v != "" {
				req.Header[k] = v
			}
		}
	}
	resp, err := a.fwd.Forward(ctx, node, req)
	span.End(err)
	return resp, err
}

// forwardRequest is r as the owner runs it.
func (a *api) forwardRequest(r *http.Request, body []byte) *forward.Request {
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	req := &forward.Request{Principal: principal(r.Context()), Method: r.Method, Path: path, Body: body,
		Header: map[string]string{}}
	for _, k := range forward.Headers {
		if v := r.Header.Get(k); v != "" {
			req.Header[k] = v
		}
	}
	return req
}

// writeForwarded answers the client with the owner's answer.
func writeForwarded(w http.ResponseWriter, resp *forward.Response) {
	h := w.Header()
	for _, k := range forward.AnswerHeaders {
		if v, ok := resp.Header[k]; ok {
			h.Set(k, v)
		}
	}
	if len(resp.Body) > 0 { // none on a 204
		h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// ServeForward runs a request another node forwarded here, as if its
// client had sent it here (forward.Handler): same endpoints, same
// principal, no token (the trust is NATS's: docs/storage.md). A session
// this node does not serve (any more), or a server stopping, is refused
// with NotServed set, so the forwarding node may claim it again.
func (h *Handler) ServeForward(ctx context.Context, req *forward.Request) *forward.Response {
	a := h.api
	a.obs.Forward("received")
	rec := &recorder{header: http.Header{}}
	r, err := http.NewRequestWithContext(ctx, req.Method, req.Path, bytes.NewReader(req.Body))
	if err != nil {
		r, _ = http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		a.writeError(rec, r, synccore.Errorf(synccore.CodeBadRequest, "forwarded request: %v", err))
		return rec.response(false)
	}
	for _, k := range forward.Headers {
		if v, ok := req.Header[k]; ok {
			r.Header.Set(k, v)
		}
	}
	r.RemoteAddr = "node " + req.From
	if a.draining.Load() {
		a.writeError(rec, r, synccore.Errorf(synccore.CodeClosed, "the server is shutting down"))
		return rec.response(true)
	}
	rt := &routing{forwarded: true}
	ctx = context.WithValue(context.WithValue(ctx, principalKey{}, req.Principal), routingKey{}, rt)
	// The forwarding node's trace goes on here: a span for the request,
	// a child of its "forward" span.
	var span obs.Span
	if a.tracer != nil {
		if p, ok := a.tracer.(obs.Propagator); ok {
			ctx = p.Extract(ctx, r.Header)
		}
		ctx, span = a.tracer.Start(ctx, "forwarded "+req.Method)
		span.SetString("agentsync.from_node", req.From)
	}
	a.writes.ServeHTTP(rec, r.WithContext(ctx))
	resp := rec.response(rt.elsewhere != nil)
	if span != nil {
		span.SetInt("http.response.status_code", int64(resp.Status))
		span.End(nil)
	}
	return resp
}

// recorder is the http.ResponseWriter of a forwarded request: the answer
// goes back over NATS.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

func (w *recorder) response(notServed bool) *forward.Response {
	resp := &forward.Response{Status: w.status, Body: w.body.Bytes(), Header: map[string]string{}, NotServed: notServed}
	if resp.Status == 0 {
		resp.Status = http.StatusOK
	}
	for _, k := range forward.AnswerHeaders {
		if v := w.header.Get(k); v != "" {
			resp.Header[k] = v
		}
	}
	return resp
}

// keptBody keeps what the handler read of a request body, to forward it
// (the handler reads it all before it claims the session).
type keptBody struct {
	io.ReadCloser
	kept bytes.Buffer
}

func (b *keptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.kept.Write(p[:n])
	return n, err
}

// newForwardKey is the Idempotency-Key of a post forwarded without one.
func newForwardKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "forward-" + hex.EncodeToString(b[:])
}
