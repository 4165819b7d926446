package natsfan

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/synccore"
)

// Publisher publishes one session's frames while this node serves it
// under one lease (epoch). Its methods other than Close are called under
// the session's lock, which orders batches and snapshots.
type Publisher struct {
	b       *Bus
	subject string
	epoch   int64
	counter uint64
	buf     []byte
	serving bus.Subscription
	// failed: a batch could not be published, nor the marker saying so;
	// the bus sends the marker once the connection is back.
	failed atomic.Bool
}

// SnapshotFunc returns the session's state for a follower: a hello frame
// (head sequence), the streaming agent message's committed revision as a
// message frame (if one streams) and the part frames streamed since, with
// the counter of the last batch that state holds. It takes the session's
// lock; ok false means this node no longer serves the session (an empty
// answer: the follower starts from the store).
type SnapshotFunc func() (counter uint64, frames []synccore.Frame, ok bool)

// Publish starts publishing the session for the lease of epoch, and
// answering snapshot requests with snapshot. The caller holds the
// session's lock, which snapshot takes: the answer is sent once it is
// released.
func (b *Bus) Publish(sessionID string, epoch int64, snapshot SnapshotFunc) (*Publisher, error) {
	if err := checkID(sessionID); err != nil {
		return nil, err
	}
	p := &Publisher{b: b, subject: framesPrefix + sessionID, epoch: epoch}
	sub, err := b.nc.Subscribe(snapshotPrefix+sessionID, func(req *bus.Msg) {
		counter, frames, ok := snapshot()
		if !ok {
			// An empty answer: this node no longer serves the session (it
			// is closing, or lost it), so the follower reads the store as
			// of a session no node serves, at once.
			_ = req.Respond(nil)
			return
		}
		data, err := appendBatch(nil, epoch, counter, frames)
		if err == nil {
			err = req.Respond(data)
		}
		if err != nil {
			// Too large for NATS (a streaming text past max_payload): the
			// follower is told at once rather than after its timeout.
			b.log.Warn("answer a snapshot request", "subject", req.Subject, "bytes", len(data), "err", err)
			_ = req.Respond(appendMarker(nil, epoch))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("natsfan: serve snapshots of session %s: %w", sessionID, err)
	}
	// Followers ask as soon as they see this epoch's first batch: the
	// server must know the responder by then. (Down, the connection
	// subscribes again when it is back.)
	if !b.Connected() {
	} else if err := b.flush(time.Second); err != nil {
		b.log.Warn("flush the snapshot responder", "session_id", sessionID, "err", err)
	}
	p.serving = sub
	b.mu.Lock()
	b.pubs[p] = struct{}{}
	b.mu.Unlock()
	return p, nil
}

// Counter is the counter of the last batch published. Caller holds the
// session's lock.
func (p *Publisher) Counter() uint64 { return p.counter }

// Send publishes one batch, numbered next. A batch that cannot be
// published (too large for NATS, or the connection down with its buffer
// full) is followed by a marker that makes the followers resync, at once
// or once the connection is back. Caller holds the session's lock.
func (p *Publisher) Send(frames []synccore.Frame) {
	p.counter++
	var err error
	p.buf, err = appendBatch(p.buf[:0], p.epoch, p.counter, frames)
	if err == nil {
		// Publish copies the bytes into the connection's buffer: p.buf is
		// free again when it returns.
		err = p.b.nc.Publish(p.subject, p.buf)
	}
	if err != nil {
		p.b.log.Warn("publish frames: followers resync", "subject", p.subject, "counter", p.counter, "bytes", len(p.buf), "err", err)
		p.failed.Store(true)
		p.sendMarker()
	}
}

// sendMarker tells the followers frames were lost, if a batch failed.
func (p *Publisher) sendMarker() {
	if p.failed.Load() && p.b.nc.Publish(p.subject, appendMarker(nil, p.epoch)) == nil {
		p.failed.Store(false)
	}
}

// Close stops answering snapshot requests; the caller sends no more.
func (p *Publisher) Close() {
	p.b.mu.Lock()
	delete(p.b.pubs, p)
	p.b.mu.Unlock()
	if err := p.serving.Unsubscribe(); err != nil && p.b.nc.Connected() {
		p.b.log.Warn("stop serving snapshots", "subject", p.subject, "err", err)
	}
}
