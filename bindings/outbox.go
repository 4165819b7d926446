package bindings

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// outbox.go posts the sends a Client keeps in its Cache (Queue), one at a
// time and in order (docs/protocol.md §6.9 "Outbox"): an entry is kept
// before it is posted, with its Idempotency-Key, and stays kept until the
// server commits it, so a restart of the program posts it again and the
// server answers with the message it committed: nothing is sent twice.

// principal is who the client's cache belongs to (Config.CachePrincipal,
// else CachePrincipal of the token).
func (c *Client) principal(ctx context.Context) (string, error) {
	if c.cfg.CachePrincipal != "" {
		return c.cfg.CachePrincipal, nil
	}
	tok, err := c.api.token(ctx)
	if err != nil {
		return "", err
	}
	return CachePrincipal(tok), nil
}

// Queue keeps a user message in the outbox of the client's Cache and
// returns once it is kept (persisted): it is posted, after the sends
// queued before it, as soon as the session can be reached, also by
// another Client on the same cache after a restart. opts.IdempotencyKey
// names it (empty: a new random key); opts.Retries is ignored. It needs
// Config.Cache.
func (c *Client) Queue(ctx context.Context, parts []synccore.Part, opts SendOptions) (OutboxEntry, error) {
	if c.cfg.Cache == nil {
		return OutboxEntry{}, synccore.Errorf(synccore.CodeBadRequest, "bindings: Queue needs Config.Cache")
	}
	p, err := c.principal(ctx)
	if err != nil {
		return OutboxEntry{}, err
	}
	key := opts.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	now := time.Now().UnixMilli()
	c.obMu.Lock()
	order := max(now, c.obOrder+1)
	c.obOrder = order
	c.obMu.Unlock()
	e := OutboxEntry{ID: key, IdempotencyKey: key, Parts: parts, Visibility: opts.Visibility, Delivery: opts.Delivery,
		CreatedAt: now, Order: order, State: OutboxQueued}
	if err := c.cfg.Cache.PutOutbox(ctx, p, c.cfg.SessionID, e); err != nil {
		return OutboxEntry{}, err
	}
	c.kickOutbox()
	return e, nil
}

// Outbox is the client's outbox as kept in its Cache, in order: the sends
// not committed yet (queued, or failed: see OutboxEntry.State).
func (c *Client) Outbox(ctx context.Context) ([]OutboxEntry, error) {
	if c.cfg.Cache == nil {
		return nil, nil
	}
	p, err := c.principal(ctx)
	if err != nil {
		return nil, err
	}
	return c.cfg.Cache.Outbox(ctx, p, c.cfg.SessionID)
}

// kickOutbox asks the outbox goroutine to post what is queued.
func (c *Client) kickOutbox() {
	select {
	case c.obKick <- struct{}{}:
	default:
	}
}

// runOutbox posts the outbox after every kick (Queue, the session live
// again, the start) until the client closes.
func (c *Client) runOutbox() {
	defer close(c.obDone)
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.obKick:
			if err := c.drainOutbox(c.ctx); err != nil && c.ctx.Err() == nil {
				c.log.Warn("outbox", "err", err)
			}
		}
	}
}

// unreachable says a post got no answer from the server itself, or one
// that says to come back later: the send stays queued.
func unreachable(err error) bool {
	var ne *NetworkError
	if errors.As(err, &ne) {
		return true
	}
	var se *synccore.Error
	if errors.As(err, &se) {
		switch se.Code {
		// internal: also a gateway's 502 or 504 in front of a server
		// that is down (an answer without a typed body).
		case synccore.CodeRateLimited, synccore.CodeClosed, synccore.CodeTimeout, synccore.CodeInternal:
			return true
		}
	}
	return false
}

// drainOutbox posts the queued sends in order, one at a time; it stops at
// the first that cannot reach the server (kept queued for the next kick).
func (c *Client) drainOutbox(ctx context.Context) error {
	p, err := c.principal(ctx)
	if err != nil {
		return err
	}
	cache := c.cfg.Cache
	for ctx.Err() == nil {
		entries, err := cache.Outbox(ctx, p, c.cfg.SessionID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(entries, func(e OutboxEntry) bool { return e.State != OutboxFailed })
		if i < 0 {
			return nil
		}
		e := entries[i]
		_, err = c.api.SendWith(ctx, c.cfg.SessionID, e.Parts, SendOptions{Visibility: e.Visibility,
			IdempotencyKey: e.IdempotencyKey, Delivery: e.Delivery})
		switch {
		case err == nil:
			if err := cache.DeleteOutbox(ctx, p, c.cfg.SessionID, e.ID); err != nil {
				return err
			}
		case unreachable(err) || ctx.Err() != nil:
			return nil // queued: posted again when the session is live
		case errors.Is(err, synccore.ErrNotFound):
			// The session is gone: its outbox goes with it (§6.9).
			for _, x := range entries {
				_ = cache.DeleteOutbox(ctx, p, c.cfg.SessionID, x.ID)
			}
			return nil
		default:
			e.State, e.Error = OutboxFailed, err.Error()
			if err := cache.PutOutbox(ctx, p, c.cfg.SessionID, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// ClearCache drops every window and outbox entry of the client's Cache,
// of every principal, as a sign-out does (sends not posted yet are lost).
// It does nothing without a Cache.
func (c *Client) ClearCache(ctx context.Context) error {
	if c.cfg.Cache == nil {
		return nil
	}
	return c.cfg.Cache.Clear(ctx, "")
}
