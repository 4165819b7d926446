package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

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
	// Shared is the shared encodings of the frames the last Next
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

// pump runs one subscription: a reader goroutine for control frames, a
// pinger, the writer of frames (this goroutine) and, with sigs, a writer
// of signals (text messages beside the frames, §4.6). It returns why the
// subscription ended.
func (a *api) pump(ctx context.Context, cancel context.CancelFunc, conn wsConn, sub subscriber, el *elider, sigs <-chan []byte) error {
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		_ = conn.ReadControl(a.pongWait)
		// The peer closed, failed or went silent: stop the writer, whether
		// it waits in Next (cancel) or in a write to a stalled peer (Close).
		cancel()
		_ = conn.Close()
	}()
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
	defer func() {
		cancel()
		pinger.Stop()
		_ = conn.Close()
		<-readerDone
		<-signalsDone
	}()

	enc := newFrameEncoder()
	for {
		frames, err := sub.Next(ctx)
		var shared []*fanout.Shared
		if len(frames) > 0 {
			shared = sub.Shared()
		}
		if el != nil {
			el.frames(frames, shared)
		}
		for rest, at := frames, 0; len(rest) > 0; {
			var batch []synccore.Frame
			batch, rest = nextMessage(rest)
			data, encErr := enc.encodeShared(batch, sharedOf(shared, at, len(batch)))
			at += len(batch)
			if encErr != nil {
				a.log.Error("encode frames", "err", encErr)
				a.closeHandshake(conn, readerDone, websocket.CloseInternalServerErr, synccore.CodeInternal)
				return encErr
			}
			werr := conn.WriteBinary(data, time.Now().Add(a.writeTimeout))
			enc.release()
			if werr != nil {
				return fmt.Errorf("write frames: %w", werr)
			}
		}
		if len(frames) > 0 {
			if last := frames[len(frames)-1]; last.Kind == synccore.FrameResync || last.Kind == synccore.FrameError {
				a.closeHandshake(conn, readerDone, websocket.CloseNormalClosure, last.Kind+": "+last.Code)
				return fmt.Errorf("server sent %s (%s)", last.Kind, last.Code)
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			a.closeHandshake(conn, readerDone, websocket.CloseGoingAway, "subscription ended")
			return err
		default:
			return err // the peer went away (ctx cancelled) or the server is stopping
		}
	}
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
