package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/synccore"
)

// frameWriter writes a subscription's frames to its connection on a
// goroutine that exists only while there is something to write: when the
// queue is empty the goroutine leaves a callback with the subscriber
// (OnReady) and returns, and the next frame queued starts another. An
// idle viewer so costs one goroutine (its control-frame reader), not two
// (BenchmarkViewerMemory/idle: 17 KB to 13 KB per idle viewer). Starting a
// goroutine per batch costs the server less CPU than waking a parked one
// did: 10,000 viewers of 100 sessions took 3.2-3.6 s of server CPU, not
// 4.2-4.7 s (BenchmarkManyViewers, old and new code in the same spell).
//
// At most one writer goroutine runs at a time: kick starts one unless one
// runs, and then asks it to poll once more before it returns.
type frameWriter struct {
	a *api
	// ctx is the subscription's: each writer goroutine, started by a
	// publish, checks it first.
	ctx        context.Context
	conn       wsConn
	sub        subscriber
	el         *elider
	readerDone <-chan struct{}
	enc        *frameEncoder

	mu      sync.Mutex
	running bool
	again   bool          // kicked while running: poll once more
	stopped bool          // ended, or stop called: start no more
	idle    chan struct{} // closed once stopped and not running
	reason  error         // why the writer ended the subscription
}

func newFrameWriter(ctx context.Context, a *api, conn wsConn, sub subscriber, el *elider, readerDone <-chan struct{}) *frameWriter {
	return &frameWriter{a: a, ctx: ctx, conn: conn, sub: sub, el: el, readerDone: readerDone,
		enc: newFrameEncoder(), idle: make(chan struct{})}
}

// kick starts the writer unless it runs or stopped. It never blocks: the
// subscriber calls it from the publisher's goroutine.
func (w *frameWriter) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.stopped:
	case w.running:
		w.again = true
	default:
		w.running = true
		go w.run()
	}
}

// leave reports whether the writer goroutine may return: not when it was
// kicked since its last poll (then it polls again). With end, the writer
// ended the subscription and no other starts.
func (w *frameWriter) leave(end bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.again && !end && !w.stopped {
		w.again = false
		return false
	}
	w.running = false
	w.stopped = w.stopped || end
	if w.stopped {
		w.closeIdle()
	}
	return true
}

// stop starts no more writers and waits for a running one to return; it
// returns why the writer ended the subscription, if it did.
func (w *frameWriter) stop() error {
	w.mu.Lock()
	w.stopped = true
	if !w.running {
		w.closeIdle()
	}
	w.mu.Unlock()
	<-w.idle
	return w.reason
}

func (w *frameWriter) closeIdle() {
	select {
	case <-w.idle:
	default:
		close(w.idle)
	}
}

func (w *frameWriter) run() {
	for {
		if w.ctx.Err() != nil {
			// Whoever ended the subscription closes the connection.
			w.leave(true)
			return
		}
		frames, err := w.sub.Poll()
		if len(frames) == 0 && err == nil {
			w.sub.OnReady(w.kick)
			if w.leave(false) {
				return
			}
			continue
		}
		if err = w.write(frames, err); err != nil {
			w.reason = err
			w.leave(true)
			// Ending the connection ends its reader, which cleans up.
			_ = w.conn.Close()
			return
		}
	}
}

// write writes one batch; an error ends the subscription (after the close
// handshake where one is due). pollErr is the error Poll returned with it.
func (w *frameWriter) write(frames []synccore.Frame, pollErr error) error {
	a, conn := w.a, w.conn
	var shared []*fanout.Shared
	if len(frames) > 0 {
		shared = w.sub.Shared()
	}
	if w.el != nil {
		w.el.frames(frames, shared)
	}
	for rest, at := frames, 0; len(rest) > 0; {
		var batch []synccore.Frame
		batch, rest = nextMessage(rest)
		data, encErr := w.enc.encodeShared(batch, sharedOf(shared, at, len(batch)))
		at += len(batch)
		if encErr != nil {
			a.log.Error("encode frames", "err", encErr)
			a.closeHandshake(conn, w.readerDone, websocket.CloseInternalServerErr, synccore.CodeInternal)
			return encErr
		}
		werr := conn.WriteBinary(data, time.Now().Add(a.writeTimeout))
		w.enc.release()
		if werr != nil {
			return fmt.Errorf("write frames: %w", werr)
		}
	}
	if len(frames) > 0 {
		if last := frames[len(frames)-1]; last.Kind == synccore.FrameResync || last.Kind == synccore.FrameError {
			a.closeHandshake(conn, w.readerDone, websocket.CloseNormalClosure, last.Kind+": "+last.Code)
			return fmt.Errorf("server sent %s (%s)", last.Kind, last.Code)
		}
	}
	if errors.Is(pollErr, io.EOF) {
		a.closeHandshake(conn, w.readerDone, websocket.CloseGoingAway, "subscription ended")
	}
	return pollErr // nil or io.EOF
}
