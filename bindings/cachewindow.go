package bindings

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// cachewindow.go renders a Client from its Cache before the network
// answers, then syncs (docs/protocol.md §6.9 "Opening"): the cached window
// is the first view (View.Cached) until the core is live, the core's first
// snapshot read is answered with the pages read from the head back to the
// oldest cached message that is not done merged with the cached messages
// below them (one page when nothing changed), and the window the core
// holds is written back as it changes. Done is final, so a cached message
// that is done is valid for ever; one that is not is replaced by the
// server's answer before it is ever taken for live.

// DefaultCacheMessages is the most messages a cached window keeps (the
// newest), as the JS host's default.
const DefaultCacheMessages = 2000

// cacheSaveDelay gathers the changes of a burst into one write.
const cacheSaveDelay = 50 * time.Millisecond

// windowCache is a Client's cached window. restored never changes once
// restoreCache returns; written is the saver goroutine's.
type windowCache struct {
	key      CacheKey
	restored *CachedWindow // the window shown until live; nil if none
	armed    atomic.Bool   // the next head read is the catch-up (again after it failed)
	kick     chan struct{}
	done     chan struct{}
	written  map[string]*synccore.Message // message id -> what the cache holds

	catchUpBytes atomic.Int64 // what the catch-up read (CatchUpBytes)
}

// restoreCache reads the client's window from its Cache (and makes the
// cache the principal's, clearing another principal's entries), and shows
// it as the first view. Any cache error only means starting from the
// network: it is logged, never fatal.
func (c *Client) restoreCache(ctx context.Context) {
	p, err := c.principal(ctx)
	if err != nil {
		c.log.Warn("cache: principal", "err", err)
		return
	}
	cache := c.cfg.Cache
	if prev, err := cache.Principal(ctx); err == nil && prev != p {
		if prev != "" {
			_ = cache.Clear(ctx, prev) // a device never shows one principal another's sessions
		}
		_ = cache.SetPrincipal(ctx, p)
	}
	wc := &windowCache{key: CacheKey{Principal: p, SessionID: c.cfg.SessionID, IncludeInternal: c.cfg.IncludeInternal},
		kick: make(chan struct{}, 1), done: make(chan struct{}), written: map[string]*synccore.Message{}}
	c.wcache = wc
	w, ok, err := cache.LoadWindow(ctx, wc.key)
	if err != nil {
		c.log.Warn("cache: load window", "err", err)
	}
	if !ok || err != nil || len(w.Messages) == 0 {
		return
	}
	wc.restored = &w
	wc.armed.Store(true)
	msgs := make([]*synccore.Message, len(w.Messages))
	for i := range w.Messages {
		msgs[i] = &w.Messages[i]
		wc.written[msgs[i].MessageID] = msgs[i]
	}
	c.view = View{SessionID: c.cfg.SessionID, Status: synccore.StatusIdle, Cached: true,
		Messages: synccore.NewMessageList(msgs), Total: w.Meta.Total, HasMoreOlder: w.Meta.HasMoreOlder,
		NextBeforeSequence: w.Meta.NextBeforeSequence, IncludeInternal: w.Meta.IncludeInternal}
	// Keep the cached messages shown until the core holds the snapshot,
	// as after a core rebuild (take).
	c.loop.recovering = true
}

// catchUpPage reports whether the head read cmd is the cached window's
// catch-up (and disarms it: it is answered once, unless it fails).
func (c *Client) catchUpPage(cmd synccore.Command) bool {
	wc := c.wcache
	return wc != nil && cmd.BeforeSequence == 0 && cmd.IncludeInternal == wc.key.IncludeInternal && wc.armed.CompareAndSwap(true, false)
}

// catchUp reads pages from the head back to the cached window's target
// and answers the core's first read with them merged with the cached
// messages below (§6.9 "Opening"). A window the server contradicts is
// dropped and the head page alone answers.
func (c *Client) catchUp(ctx context.Context, cmd synccore.Command, sessionID string, cached []synccore.Message) ([]byte, error) {
	newest := cached[len(cached)-1].Sequence
	target := newest + 1
	for i := range cached {
		if !cached[i].Done() {
			target = cached[i].Sequence
			break
		}
	}
	var pages []synccore.MessagePage
	var bytes int64
	var before int64
	for {
		raw, err := c.api.pageBytes(ctx, sessionID, cmd.Limit, before, cmd.IncludeInternal)
		if err != nil {
			c.wcache.armed.Store(true) // the core reads again: catch up then
			return nil, err
		}
		bytes += int64(len(raw))
		p, err := wire.DecodePage(raw)
		if err != nil {
			return nil, err
		}
		pages = append(pages, p)
		if !p.HasMore || p.NextBeforeSequence == 0 || len(p.Items) == 0 || p.Items[0].Sequence <= target ||
			before != 0 && p.NextBeforeSequence >= before {
			break
		}
		before = p.NextBeforeSequence
	}
	c.wcache.catchUpBytes.Store(bytes)
	head, oldest := pages[0], pages[len(pages)-1]
	var fresh []synccore.Message
	for i := len(pages) - 1; i >= 0; i-- {
		fresh = append(fresh, pages[i].Items...)
	}
	from := int64(1<<62 - 1)
	if len(fresh) > 0 {
		from = fresh[0].Sequence
	}
	ids := make(map[int64]string, len(cached))
	for _, m := range cached {
		ids[m.Sequence] = m.MessageID
	}
	stale := head.Total < newest
	for _, m := range fresh {
		if id, ok := ids[m.Sequence]; ok && id != m.MessageID {
			stale = true
		}
	}
	page := synccore.MessagePage{Total: head.Total, HasMore: oldest.HasMore, NextBeforeSequence: oldest.NextBeforeSequence}
	if stale {
		c.log.Info("cache: the server contradicts the cached window; dropped")
		c.dropCachedWindow()
	} else {
		var older []synccore.Message
		for _, m := range cached {
			if m.Sequence < from {
				older = append(older, m)
			}
		}
		if len(older) > 0 {
			meta := c.wcache.restored.Meta
			page.HasMore, page.NextBeforeSequence = meta.HasMoreOlder, meta.NextBeforeSequence
		}
		fresh = append(older, fresh...)
	}
	page.Items = fresh
	if len(fresh) > 0 {
		page.StartSequence, page.EndSequence = fresh[0].Sequence, fresh[len(fresh)-1].Sequence
	}
	return wire.EncodePage(page), nil
}

// dropCachedWindow removes the client's window from the cache: a session
// that is gone (written no more: terminal), or a window the server
// contradicts (the core's window is written in its place).
func (c *Client) dropCachedWindow() {
	wc := c.wcache
	if wc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.cfg.Cache.DeleteWindow(ctx, wc.key); err != nil {
		c.log.Warn("cache: drop window", "err", err)
	}
}

// CatchUpBytes is what the cached window's catch-up read from the server
// (the pages from the head back to the cached window's target): one page
// when nothing changed, whatever the history's length. 0 without a cached
// window, or before the read.
func (c *Client) CatchUpBytes() int64 {
	if c.wcache == nil {
		return 0
	}
	return c.wcache.catchUpBytes.Load()
}

// runCacheSaver writes the core's window to the cache after each change
// once live (a burst as one write), and once more when the client closes.
func (c *Client) runCacheSaver() {
	wc := c.wcache
	defer close(wc.done)
	stop := c.Subscribe(func(View) {
		select {
		case wc.kick <- struct{}{}:
		default:
		}
	})
	defer stop()
	for {
		select {
		case <-c.ctx.Done():
			<-c.done // the last view is published
			c.saveWindow(true)
			return
		case <-wc.kick:
			select {
			case <-time.After(cacheSaveDelay):
			case <-c.ctx.Done():
			}
			c.saveWindow(false)
		}
	}
}

// saveWindow writes what changed in the view since the last write: the
// messages whose pointer changed (a View shares unchanged ones), and the
// meta; past the size bound the oldest are dropped. A message that is not
// done is written only by the final save (Close): its pointer changes
// with every delta, and a long answer rewritten each cacheSaveDelay would
// write its text over and over; a cached one that is not done is only a
// hint anyway (§6.9), which the catch-up replaces.
func (c *Client) saveWindow(final bool) {
	wc := c.wcache
	v := c.View()
	if v.Cached || v.Messages.Len() == 0 {
		return // nothing of the core's yet: the cache keeps what it had
	}
	if terminal(c.Err()) {
		return
	}
	limit := c.cfg.CacheMessages
	if limit <= 0 {
		limit = DefaultCacheMessages
	}
	all := make([]*synccore.Message, 0, v.Messages.Len())
	for _, m := range v.Messages.All() {
		all = append(all, m)
	}
	var keepFrom int64
	if len(all) > limit {
		all = all[len(all)-limit:]
		keepFrom = all[0].Sequence
	}
	var put []synccore.Message
	seen := make(map[string]*synccore.Message, len(all))
	for _, m := range all {
		kept, ok := wc.written[m.MessageID]
		switch {
		case kept == m:
		case !final && !m.Done():
			if !ok {
				continue // not in the cache yet: written once done, or at Close
			}
			m = kept // the cache keeps its earlier hint until then
		default:
			put = append(put, *m)
		}
		seen[m.MessageID] = m
	}
	if len(put) == 0 && keepFrom == 0 && len(seen) == len(wc.written) {
		return
	}
	meta := WindowMeta{Total: v.Total, HasMoreOlder: v.HasMoreOlder || keepFrom > 0, NextBeforeSequence: v.NextBeforeSequence,
		IncludeInternal: v.IncludeInternal, SavedAt: time.Now().UnixMilli()}
	if keepFrom > 0 {
		meta.NextBeforeSequence = keepFrom
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.cfg.Cache.WriteWindow(ctx, wc.key, meta, put, keepFrom); err != nil {
		c.log.Warn("cache: write window", "err", err)
		return
	}
	wc.written = seen
}
