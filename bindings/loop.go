package bindings

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/synccore"
)

// The loop goroutine is the only caller of the core. Everything else (the
// subscription reader, page fetches, timers, method calls) talks to it
// through Client.events, so the core sees one ordered stream of events.

type evKind int

const (
	evCaller  evKind = iota // a method's event; acknowledged once the view shows it
	evFunc                  // a function to run between events (Digest)
	evIO                    // a page answer or a timer: stale after a core rebuild
	evSub                   // from a subscription: stale once it is replaced
	evRestart               // rebuild a broken core, after its backoff
)

// loopEvent is one input of the loop. epoch and gen say which core and
// which subscription an asynchronous result belongs to: results of a core
// that was rebuilt, or of a subscription the core closed, are dropped
// (the core expects no event for a close it asked for).
type loopEvent struct {
	kind  evKind
	ev    synccore.Event
	epoch uint64
	gen   uint64
	fn    func() error
	ack   chan error
	// cause is why a subscription or a page read failed (connection_lost,
	// page_failed): a *NetworkError or the server's typed refusal.
	cause error
}

// loopState is owned by the loop goroutine.
type loopState struct {
	epoch  uint64 // bumped by every core rebuild
	gen    uint64 // bumped by every subscription opened or closed
	sub    *subscription
	timers map[uint64]*time.Timer
	rng    *rand.Rand

	includeInternal bool // as last asked, replayed on a rebuild

	// What changed since the last flush.
	dirty         bool // the core handled an event whose changes are not taken yet
	status        string
	reason        string // the core's reason for status
	statusChanged bool
	// cause is the last failure to connect or read since the client was
	// last live (View.Cause); causeChanged asks for a view that shows it.
	cause        error
	causeChanged bool
	acks         []pendingAck
	// pending is what changed since the last published view: one take of
	// the core per refresh, so each changed message appears once (more
	// than one take only when a patch failed and the view was read whole).
	pending *synccore.Changes
	// recoveringStatus is the status of a rebuilt core that is not live
	// yet, to be shown with the old messages.
	recoveringStatus string

	// mirror is the view's messages, patched with the core's changes.
	mirror synccore.Mirror

	// Recovery of a broken core.
	broken     bool      // the core failed; waiting to rebuild it
	recovering bool      // rebuilt, not live yet: keep showing the old messages
	resets     int       // rebuilds in a row
	lastReset  time.Time // resets counts only rebuilds close together
}

type pendingAck struct {
	ch  chan error
	err error
}

func (s *loopState) init() {
	s.timers = map[uint64]*time.Timer{}
	s.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}

// maxBatch bounds the events handled before the view is refreshed, so a
// flood of frames still shows progress.
const maxBatch = 64

func (c *Client) run() {
	defer close(c.done)
	c.loop.includeInternal = c.cfg.IncludeInternal
	c.startCore()
	c.flush()
	for {
		select {
		case le := <-c.events:
			// Handle what is queued (also what arrives meanwhile) before
			// one view refresh, and take the changes once, with the last
			// event: a burst of frames reads each changed message once,
			// not once per frame. One event is looked ahead to know
			// which is the last.
			for n := 1; ; n++ {
				next, more := c.queued(n)
				c.process(le, !more)
				if !more {
					break
				}
				le = next
			}
			c.flush()
		case <-c.ctx.Done():
			c.shutdown()
			return
		}
	}
}

// queued returns the next event if one is waiting and the refresh, which
// has n events so far, may take more.
func (c *Client) queued(n int) (loopEvent, bool) {
	if n >= maxBatch {
		return loopEvent{}, false
	}
	select {
	case le := <-c.events:
		return le, true
	default:
		return loopEvent{}, false
	}
}

// send hands an asynchronous result to the loop, unless the client closed.
func (c *Client) send(le loopEvent) {
	select {
	case c.events <- le:
	case <-c.ctx.Done():
	}
}

// process feeds one event to the core. The last event of a refresh, if it
// is frames (the hot path), also takes what changed, in the same call;
// any other leaves the take to flush.
func (c *Client) process(le loopEvent, last bool) {
	l := &c.loop
	switch le.kind {
	case evFunc:
		l.acks = append(l.acks, pendingAck{le.ack, le.fn()})
		return
	case evRestart:
		if le.epoch == l.epoch {
			c.rebuildCore()
		}
		return
	case evIO:
		if le.epoch != l.epoch {
			return
		}
	case evSub:
		if le.epoch != l.epoch || le.gen != l.gen {
			return
		}
	}
	if le.cause != nil && c.failed(le.cause) {
		return // the client ends: the core hears nothing more
	}
	ev := le.ev
	if l.broken {
		if le.ack != nil {
			l.acks = append(l.acks, pendingAck{le.ack, synccore.Errorf(synccore.CodeCoreBroken, "the core is being rebuilt")})
		}
		return
	}
	switch ev.Type {
	case synccore.EvConnectionLost:
		l.sub = nil // its reader has ended
		ev.Jitter = jitter(l.rng)
	case synccore.EvTimerFired:
		delete(l.timers, ev.TimerID)
	case synccore.EvSetIncludeInternal:
		l.includeInternal = ev.IncludeInternal
	}
	var cmds []synccore.Command
	var err error
	if ev.Type == synccore.EvFrames && last {
		// The hot path: the frames and what they changed in one call.
		var ch *synccore.Changes
		if cmds, ch, err = c.core.HandleChanges(ev); ch != nil {
			c.take(*ch)
			l.dirty = false
		}
	} else {
		l.dirty = true
		cmds, err = c.core.Handle(ev)
	}
	if err != nil {
		if isBroken(err) {
			c.breakCore(err)
		} else {
			c.log.Warn("core rejected an event", "event", ev.Type, "err", err)
		}
	}
	if !l.broken {
		c.execute(cmds)
	}
	if le.ack != nil {
		l.acks = append(l.acks, pendingAck{le.ack, err})
	}
}

// execute carries out the core's commands in order.
func (c *Client) execute(cmds []synccore.Command) {
	l := &c.loop
	for _, cmd := range cmds {
		switch cmd.Type {
		case synccore.CmdOpenSubscription:
			c.openSubscription(cmd.SessionID)
		case synccore.CmdCloseSubscription:
			c.closeSubscription(cmd.Reason)
		case synccore.CmdFetchPage:
			c.fetchPage(cmd)
		case synccore.CmdSetTimer:
			c.setTimer(cmd)
		case synccore.CmdRender:
			// What changed is taken once per flush (Core.Changes).
		case synccore.CmdStatus:
			l.status, l.reason, l.statusChanged = cmd.Status, cmd.Reason, true
			if cmd.Status == synccore.StatusLive && l.cause != nil {
				l.cause, l.causeChanged = nil, true
			}
			if cmd.Status == synccore.StatusLive && c.obKick != nil {
				c.kickOutbox() // reachable again: post what is queued
			}
			c.log.Debug("status", "status", cmd.Status, "reason", cmd.Reason)
		default:
			c.log.Warn("unknown core command", "command", cmd.Type)
		}
	}
}

// startCore feeds the start event to a fresh core.
func (c *Client) startCore() {
	c.loop.dirty = true
	cmds, err := c.core.Handle(synccore.Event{
		Type:            synccore.EvStart,
		SessionID:       c.cfg.SessionID,
		PageLimit:       c.cfg.PageLimit,
		IncludeInternal: c.loop.includeInternal,
	})
	if err != nil {
		if isBroken(err) {
			c.breakCore(err)
			return
		}
		// A core that refuses to start cannot sync: stop.
		c.log.Error("core refused to start", "err", err)
		c.stop(err)
		c.cancel()
		return
	}
	c.execute(cmds)
}

// breakCore reacts to a core_broken error (a trap or a recovered panic;
// never a server's internal error, which only resyncs): drop everything that
// belongs to the broken core, then rebuild it (at once the first time, with
// backoff when it keeps failing). The view keeps its messages meanwhile.
func (c *Client) breakCore(cause error) {
	l := &c.loop
	c.log.Error("core failed; rebuilding it and resyncing from the snapshot", "err", cause)
	l.broken, l.recovering = true, true
	c.closeSubscription("core failed")
	c.stopTimers()
	l.epoch++
	if _, ok := c.core.(core.Resetter); !ok {
		c.stop(cause)
		c.cancel()
		return
	}
	now := time.Now()
	if now.Sub(l.lastReset) > time.Minute {
		l.resets = 0
	}
	l.resets++
	l.lastReset = now
	c.scheduleRebuild()
}

// scheduleRebuild rebuilds the core after the backoff of l.resets.
func (c *Client) scheduleRebuild() {
	l := &c.loop
	d := backoff(l.resets)
	if d == 0 {
		c.rebuildCore()
		return
	}
	epoch := l.epoch
	time.AfterFunc(d, func() { c.send(loopEvent{kind: evRestart, epoch: epoch}) })
}

// rebuildCore resets the core and starts syncing again from the server.
func (c *Client) rebuildCore() {
	l := &c.loop
	if err := c.core.(core.Resetter).Reset(c.ctx); err != nil {
		c.log.Error("rebuild core", "err", err)
		l.resets++
		c.scheduleRebuild()
		return
	}
	l.broken = false
	l.epoch++
	c.startCore()
}

// flush publishes the view if anything changed, then answers the callers
// whose events are now reflected in it.
func (c *Client) flush() {
	l := &c.loop
	if l.dirty && !l.broken {
		if ch, err := c.core.Changes(); err != nil {
			if isBroken(err) {
				c.breakCore(err)
			}
			c.log.Error("read changes", "err", err)
		} else {
			c.take(ch)
		}
	}
	if v, ch, ok := c.nextView(); ok {
		c.publish(v, ch)
	}
	l.dirty, l.statusChanged, l.causeChanged = false, false, false
	for _, a := range l.acks {
		a.ch <- a.err
	}
	l.acks = l.acks[:0]
}

// take patches the mirror with changes taken from the core (the cost
// follows what changed, not the view's size) and queues them for the next
// published view.
func (c *Client) take(ch synccore.Changes) {
	l := &c.loop
	if l.recovering {
		if ch.Status != synccore.StatusLive {
			// A rebuilt core starts empty: keep the old messages until the
			// new one holds the snapshot (which it reports as a reset).
			l.recoveringStatus = ch.Status
			return
		}
		l.recovering, l.recoveringStatus = false, ""
	}
	if err := l.mirror.Patch(ch); err != nil {
		// The copy and the core disagree (a bug): start the copy over.
		c.log.Error("apply changes; reading the whole view", "err", err)
		full, verr := c.core.View()
		if verr != nil {
			if isBroken(verr) {
				c.breakCore(verr)
			}
			return
		}
		ch = resetChanges(viewOf(full))
		_ = l.mirror.Patch(ch)
	}
	if l.pending == nil || ch.Reset {
		l.pending = &ch
		return
	}
	msgs := append(l.pending.Messages, ch.Messages...)
	reset := l.pending.Reset
	*l.pending = ch
	l.pending.Messages, l.pending.Reset = msgs, reset
}

// nextView is the view to publish, if anything changed, with what changed
// for the watchers (nil when the messages did not change).
func (c *Client) nextView() (View, *synccore.Changes, bool) {
	l := &c.loop
	v := c.View()
	switch {
	case l.pending != nil:
		ch := l.pending
		l.pending = nil
		msgs := l.mirror.Messages()
		if ch.Reset {
			ch.Messages = wholeMessages(msgs) // the reset and the patches after it, as one reset
		}
		return View{
			SessionID:          c.cfg.SessionID,
			Status:             ch.Status,
			Reason:             l.reason,
			Cause:              l.cause,
			Messages:           msgs,
			Total:              ch.Total,
			HasMoreOlder:       ch.HasMoreOlder,
			NextBeforeSequence: ch.NextBeforeSequence,
			LoadingOlder:       ch.LoadingOlder,
			IncludeInternal:    ch.IncludeInternal,
		}, ch, true
	case l.broken && l.statusChanged:
		// The core is being rebuilt: keep the old messages (stale but whole).
		v.Status, v.Reason, v.Cause = l.status, l.reason, l.cause
		return v, nil, true
	case l.recoveringStatus != "" && l.recoveringStatus != v.Status:
		v.Status, v.Reason, v.Cause = l.recoveringStatus, l.reason, l.cause
		return v, nil, true
	case l.causeChanged || l.statusChanged && v.Reason != l.reason:
		v.Reason, v.Cause = l.reason, l.cause
		return v, nil, true
	}
	return v, nil, false
}

// wholeMessages is msgs as changes that carry each message whole.
func wholeMessages(msgs synccore.MessageList) []synccore.MessageChange {
	out := make([]synccore.MessageChange, 0, msgs.Len())
	for _, m := range msgs.All() {
		out = append(out, synccore.MessageChange{MessageID: m.MessageID, Message: m})
	}
	return out
}

// shutdown ends the loop: the core hears close, resources are released,
// and the last view says closed.
func (c *Client) shutdown() {
	l := &c.loop
	if !l.broken {
		if _, err := c.core.Handle(synccore.Event{Type: synccore.EvClose}); err != nil && !isClosedErr(err) {
			c.log.Debug("close core", "err", err)
		}
	}
	c.closeSubscription("client closed")
	c.stopTimers()
	if err := c.core.Close(); err != nil {
		c.log.Warn("close core", "err", err)
	}
	v := c.View()
	v.Status, v.Reason = synccore.StatusClosed, "closed by the host"
	if err := c.Err(); err != nil {
		v.Reason, v.Cause = err.Error(), err
	}
	c.publish(v, nil)
	for _, a := range l.acks {
		a.ch <- errClosed
	}
	l.acks = nil
}

// setTimer arms a timer whose firing is an event of the current core.
func (c *Client) setTimer(cmd synccore.Command) {
	l := &c.loop
	if t, ok := l.timers[cmd.TimerID]; ok {
		t.Stop()
	}
	epoch, id := l.epoch, cmd.TimerID
	l.timers[id] = time.AfterFunc(time.Duration(cmd.DelayMs)*time.Millisecond, func() {
		c.send(loopEvent{kind: evIO, epoch: epoch, ev: synccore.Event{Type: synccore.EvTimerFired, TimerID: id}})
	})
}

func (c *Client) stopTimers() {
	for id, t := range c.loop.timers {
		t.Stop()
		delete(c.loop.timers, id)
	}
}

// fetchPage reads a page in its own goroutine and reports it to the core
// as page or page_failed with the command's request id.
func (c *Client) fetchPage(cmd synccore.Command) {
	epoch := c.loop.epoch
	sessionID := cmd.SessionID
	if sessionID == "" {
		sessionID = c.cfg.SessionID
	}
	catchUp := c.catchUpPage(cmd)
	go func() {
		ctx, cancel := context.WithTimeout(c.ctx, pageTimeout)
		defer cancel()
		var data []byte
		var err error
		if catchUp {
			data, err = c.catchUp(ctx, cmd, sessionID, c.wcache.restored.Messages)
		} else {
			data, err = c.api.pageBytes(ctx, sessionID, cmd.Limit, cmd.BeforeSequence, cmd.IncludeInternal)
		}
		ev := synccore.Event{Type: synccore.EvPage, RequestID: cmd.RequestID, Data: data}
		if err != nil {
			if c.ctx.Err() != nil {
				return // closing: nobody listens
			}
			c.log.Warn("page read failed", "err", err, "before_sequence", cmd.BeforeSequence)
			ev = synccore.Event{Type: synccore.EvPageFailed, RequestID: cmd.RequestID, Error: err.Error()}
		}
		c.send(loopEvent{kind: evIO, epoch: epoch, ev: ev, cause: err})
	}()
}

// failed takes the cause of a failed subscription or page read. A session
// that is gone (not_found) or a refused token that no TokenSource replaced
// (unauthorized, forbidden) ends the client at once: retrying cannot help,
// and Err, the last view's Cause and Dial say why. Any other cause is
// shown (View.Cause) while the core backs off and retries. It reports
// whether the client ends.
func (c *Client) failed(cause error) bool {
	l := &c.loop
	if terminal(cause) {
		c.log.Warn("giving up on the session", "err", cause)
		if errors.Is(cause, synccore.ErrNotFound) {
			c.dropCachedWindow() // gone: its window goes with it (§6.9)
		}
		c.stop(cause)
		c.cancel()
		return true
	}
	if l.status != synccore.StatusLive { // an older page that failed while live is retried unseen
		l.cause, l.causeChanged = cause, true
	}
	return false
}

// reconnectNow fires the pending timers of a client waiting to reconnect
// (Reconnect): the core connects at once instead of at the end of its
// backoff.
func (c *Client) reconnectNow() error {
	l := &c.loop
	if l.broken || l.status != synccore.StatusBackoff {
		return nil
	}
	ids := make([]uint64, 0, len(l.timers))
	for id, t := range l.timers {
		t.Stop()
		ids = append(ids, id)
	}
	for _, id := range ids {
		c.process(loopEvent{kind: evIO, epoch: l.epoch, ev: synccore.Event{Type: synccore.EvTimerFired, TimerID: id}}, false)
	}
	return nil
}
