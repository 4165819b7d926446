package api

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/server/internal/fanout"

	"github.com/agentsync/agentsync/synccore"
)

// subscriber is what the session manager hands out for one subscription:
// fanout.Subscriber satisfies it.
type subscriber interface {
	// Next blocks for the frames queued since the last call, already
	// numbered; io.EOF after the last one.
	Next(ctx context.Context) ([]synccore.Frame, error)
	// Poll is Next without the wait: no frames and a nil error when
	// nothing is queued.
	Poll() ([]synccore.Frame, error)
	// OnReady calls f once, without blocking, when Poll has something
	// to return (fanout.Subscriber.OnReady).
	OnReady(f func())
	// Shared is the shared encodings of the frames the last Next or Poll
	// returned, index by index (fanout.Subscriber.Shared).
	Shared() []*fanout.Shared
	Close()
}

// closeGrace is how long the writer waits for the peer's answer to its
// close frame before dropping the connection.
const closeGrace = 2 * time.Second

// subscribe upgrades GET /v1/sessions/{id}/subscribe. The bounds on
// subscribers are checked and the session is looked up before the
// upgrade, so a refusal is a plain typed answer (429, 404).
//
// Once upgraded, the subscription runs on a goroutine of its own and the
// handler returns: net/http then lets go of the request's connection
// state, its buffers and the handler's stack, grown deep by the
// middleware and the snapshot read, which an idle viewer would otherwise
// keep for its whole life (BenchmarkViewerMemory/idle).
func (a *api) subscribe(w http.ResponseWriter, r *http.Request) {
	// ctx outlives the request; until the hand-off the request's end
	// (the client gone while the snapshot loads) ends it too.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	unbind := context.AfterFunc(r.Context(), cancel)
	var cleanups []func() // run in reverse once the subscription ends
	defer func() { runReversed(cleanups) }()
	cleanups = append(cleanups, cancel)
	id := r.PathValue("id")
	var el *elider
	switch v := r.URL.Query().Get("kept"); v {
	case "1":
		el = newElider() // the client takes texts without what it was sent (§4.5)
	case "", "0":
	default:
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "kept must be 1 or 0, got %q", v))
		return
	}
	var sigs <-chan []byte
	switch v := r.URL.Query().Get("signals"); v {
	case "1":
		if a.signals == nil {
			break
		}
		root, err := a.mgr.Root(ctx, id)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		s := a.signals.Subscribe(root, id, presenceName(ctx))
		cleanups = append(cleanups, s.Close)
		sigs = s.C
	case "", "0":
	default:
		a.writeError(w, r, synccore.Errorf(synccore.CodeBadRequest, "signals must be 1 or 0, got %q", v))
		return
	}
	sub, release, ok := a.subscribeBounded(ctx, w, r, id)
	if !ok {
		return
	}
	cleanups = append(cleanups, release)
	if g := grantOf(r.Context()); g.share != nil || g.role != "" && g.role != httpwire.RoleOwner {
		// Revoking the link or the membership ends it (shares.go).
		key, expires := memberRevocationKey(id, principal(r.Context())), int64(0)
		if g.share != nil {
			key, expires = shareRevocationKey(g.share.ShareID), g.share.ExpiresAt
		}
		rs := newRevocable(ctx, sub, expires)
		a.revoked.add(key, rs)
		cleanups = append(cleanups, func() { a.revoked.remove(key, rs) })
		sub = rs
	}
	cleanups = append(cleanups, sub.Close)
	conn, err := a.upgrader.Upgrade(w, r)
	if err != nil {
		a.log.Debug("websocket upgrade failed", "session_id", id, "err", err)
		return
	}
	cleanups = append(cleanups, func() { _ = conn.Close() })
	if !unbind() {
		return // the request ended meanwhile: ctx is cancelled
	}
	run, remote := cleanups, r.RemoteAddr
	cleanups = nil // the goroutine's now
	a.log.Debug("subscription opened", "session_id", id, "remote", remote)
	go func() {
		defer runReversed(run)
		err := a.pump(ctx, cancel, conn, sub, el, sigs)
		a.log.Debug("subscription ended", "session_id", id, "remote", remote, "reason", err)
	}()
}

// pump runs one subscription: the reader of control frames (this
// goroutine, which lives as long as the subscription), a pinger, the
// frame writer (a goroutine only while it has frames to write:
// frameWriter) and, with sigs, a writer of signals (text messages beside
// the frames, §4.6). It returns why the subscription ended.
func (a *api) pump(ctx context.Context, cancel context.CancelFunc, conn wsConn, sub subscriber, el *elider, sigs <-chan []byte) error {
	// The pinger is a timer, not a goroutine: an idle subscription costs
	// one goroutine and its stack fewer (BenchmarkViewerMemory: 33 to 30 KB
	// of resident memory per idle viewer with the pooled encode buffers).
	// A ping that fails ends the subscription. (Armed by Reset once pinger
	// is set: the callback reads it.)
	var pinger *time.Timer
	pinger = time.AfterFunc(time.Duration(math.MaxInt64), func() {
		if ctx.Err() != nil {
			return
		}
		if err := conn.Ping(time.Now().Add(a.writeTimeout)); err != nil {
			cancel()
			return
		}
		pinger.Reset(a.pingInterval)
	})
	pinger.Reset(a.pingInterval)
	// Only a subscription that asked for signals pays for their writer
	// (an idle viewer's memory is mostly goroutines: BenchmarkViewerMemory).
	signalsDone := make(chan struct{})
	if sigs == nil {
		close(signalsDone)
	} else {
		go a.writeSignals(ctx, cancel, conn, sigs, signalsDone)
	}
	readerDone := make(chan struct{})
	w := newFrameWriter(ctx, a, conn, sub, el, readerDone)
	w.kick() // hello and the snapshot are queued
	// Whoever ends the subscription (a failed ping or signal, the writer,
	// the server) ends the connection, and so this reader.
	context.AfterFunc(ctx, func() { _ = conn.Close() })
	err := conn.ReadControl(a.pongWait)
	close(readerDone)
	cancel()
	_ = conn.Close() // at once, not when the AfterFunc's goroutine runs
	pinger.Stop()
	if werr := w.stop(); werr != nil {
		err = werr
	}
	<-signalsDone
	return err
}

// runReversed calls fs last to first, as defers run.
func runReversed(fs []func()) {
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// sharedOf is shared[at:at+n], as far as shared goes.
func sharedOf(shared []*fanout.Shared, at, n int) []*fanout.Shared {
	if at >= len(shared) {
		return nil
	}
	return shared[at:min(len(shared), at+n)]
}

// writeSignals writes each signal as a text message until ctx ends; a
// failed write ends the subscription.
func (a *api) writeSignals(ctx context.Context, cancel context.CancelFunc, conn wsConn, sigs <-chan []byte, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-ctx.Done():
			return
		case data := <-sigs:
			if err := conn.WriteText(data, time.Now().Add(a.writeTimeout)); err != nil {
				cancel()
				return
			}
		}
	}
}

// closeHandshake sends a close frame and waits a little for the peer's
// close answer (seen by the reader) so the client reads a clean close.
func (a *api) closeHandshake(conn wsConn, readerDone <-chan struct{}, code int, reason string) {
	if len(reason) > 120 { // a close reason must fit in a 125-byte control frame
		reason = reason[:120]
	}
	if err := conn.SendClose(code, reason, time.Now().Add(a.writeTimeout)); err != nil {
		return
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-readerDone:
	case <-t.C:
	}
}
