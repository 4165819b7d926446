package bindings

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/gorilla/websocket"
)

// Config configures a Client. BaseURL and SessionID are required.
type Config struct {
	// BaseURL is the server's root, e.g. "http://127.0.0.1:8080".
	BaseURL   string
	SessionID string
	// Token, when set, is sent as "Authorization: Bearer <token>" on every
	// request and on the subscription.
	Token string
	// TokenSource, when set, gives the token instead of Token: first before
	// the first request, then again whenever the server refuses the one in
	// use, for HTTP and the subscription alike (see TokenSource).
	TokenSource TokenSource
	// PageLimit is the page size of snapshot reads (0: the core's default, 50).
	PageLimit int
	// IncludeInternal shows internal messages too (debugging, audit).
	IncludeInternal bool

	// Core runs the sync state machine. Nil means a WasmCore on Runtime.
	// The Client owns it and closes it on Close.
	Core core.Core
	// Runtime makes the WasmCore when Core is nil. Nil means a Runtime
	// shared by the process, made with a zero RuntimeConfig on first use.
	Runtime *core.Runtime

	// HTTPClient defaults to http.DefaultClient.
	HTTPClient *http.Client
	// Dialer opens the WebSocket; nil means websocket.DefaultDialer.
	Dialer *websocket.Dialer
	// MaxMessageBytes bounds one WebSocket message from the server
	// (0: 64 MiB). A message holding a whole long output can be large.
	MaxMessageBytes int64
	// Logger receives the client's logs; nil discards them.
	Logger *slog.Logger
	// OnAlternatives, when set, asks the subscription for signals
	// (docs/protocol.md §4.6) and is called with each position of the
	// session's path that gained or lost an alternative (a fork made or
	// deleted anywhere in the conversation): its count now, and which one
	// the path takes. It runs on the connection's goroutine: it must not
	// block.
	OnAlternatives func(httpwire.BranchCount)

	// Cache, when set, keeps the session's window and the client's outbox
	// (Queue, Outbox) on the device, e.g. a bindings/cache.File; nil means
	// no cache. With a cached window the first view is that window
	// (View.Cached) and the first read catches up from it (CatchUpBytes).
	// See docs/protocol.md §6.9.
	Cache Cache
	// CacheMessages bounds a cached window (the newest are kept); 0 means
	// DefaultCacheMessages.
	CacheMessages int
	// CachePrincipal names whose the cache's entries are; empty means
	// CachePrincipal of the token.
	CachePrincipal string
}

// Client keeps an exact view of one session: it runs the core's commands
// (subscription, page reads, timers) and reconnects by itself. Its methods
// are safe for concurrent use.
type Client struct {
	cfg  Config
	api  *API
	core core.Core
	log  *slog.Logger

	// events feeds the loop goroutine, the only caller of the core.
	events chan loopEvent
	ctx    context.Context // ends when Close is called
	cancel context.CancelFunc
	done   chan struct{} // closed when the loop has exited

	loop loopState // owned by the loop goroutine

	// notify wakes the goroutine that calls subscribers (1-buffered: views
	// published while subscribers run coalesce into the newest one).
	notify chan struct{}

	mu      sync.Mutex
	view    View
	changed chan struct{} // closed and replaced on every view change
	subs    []subscriber
	nextSub int
	err     error // why the client stopped, if it stopped on its own
	// updates are the views and changes published since the watchers were
	// last called, oldest first (kept only while there are watchers).
	updates  []Update
	overflow bool // updates were dropped: the next call is a reset

	// The outbox (outbox.go), with a Cache only.
	obKick  chan struct{}
	obDone  chan struct{}
	obMu    sync.Mutex
	obOrder int64
	// The cached window (cachewindow.go), with a Cache only.
	wcache *windowCache
}

type subscriber struct {
	id    int
	fn    func(View)
	watch func(Update)
}

// Update is one change of the view, as Watch reports it: the view after
// it, and what changed since the previous Update (Changes.Reset: the list
// was replaced, every message is given whole). Each changed message
// appears once in Changes.
type Update struct {
	View    View
	Changes synccore.Changes
}

// maxUpdates bounds the updates queued for slow watchers; past it they are
// replaced by one reset that carries the newest view whole.
const maxUpdates = 4096

// Dial starts a Client and waits until it is live: subscribed and holding
// the snapshot. It returns an error as soon as the first attempt fails:
// a *NetworkError (refused, unresolved, cut: Retryable) or the server's
// typed refusal (not_found for an unknown or deleted session, unauthorized
// when the token is refused and no TokenSource gives another). If ctx ends
// first, ctx's error is returned. The client is closed on every error.
// Use New to get the client at once and watch it connect (and retry) on
// its own.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	c, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var cause error
	err = c.WaitFor(ctx, func(v View) bool {
		cause = v.Cause
		return v.Status == synccore.StatusLive || v.Cause != nil
	})
	if err == nil && cause != nil && c.Status() != synccore.StatusLive {
		err = cause
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("bindings: dial session %s: %w", cfg.SessionID, err)
	}
	return c, nil
}

// New starts a Client without waiting for it to connect. ctx bounds only
// the setup (making the core); Close ends the client.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.BaseURL == "" || cfg.SessionID == "" {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "bindings: Config needs BaseURL and SessionID")
	}
	cr := cfg.Core
	if cr == nil {
		rt := cfg.Runtime
		if rt == nil {
			var err error
			if rt, err = defaultRuntime(ctx); err != nil {
				return nil, err
			}
		}
		wc, err := core.NewWasmCore(ctx, rt)
		if err != nil {
			return nil, err
		}
		cr = wc
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("session_id", cfg.SessionID)
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 64 << 20
	}
	c := &Client{
		cfg:     cfg,
		api:     &API{BaseURL: cfg.BaseURL, Token: cfg.Token, TokenSource: cfg.TokenSource, HTTPClient: cfg.HTTPClient},
		core:    cr,
		log:     log,
		events:  make(chan loopEvent, 64),
		done:    make(chan struct{}),
		notify:  make(chan struct{}, 1),
		changed: make(chan struct{}),
		view:    View{SessionID: cfg.SessionID, Status: synccore.StatusIdle},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.loop.init()
	c.obDone = make(chan struct{})
	if cfg.Cache != nil {
		c.restoreCache(ctx)
		go c.runCacheSaver()
		c.obKick = make(chan struct{}, 1)
		c.kickOutbox() // what a previous run left queued
		go c.runOutbox()
	} else {
		close(c.obDone)
	}
	go c.run()
	go c.notifySubscribers()
	return c, nil
}

var (
	defaultRTMu sync.Mutex
	defaultRT   *core.Runtime
)

// defaultRuntime is the process-wide Runtime of clients without one. A
// failure is not remembered: the next client tries again.
func defaultRuntime(ctx context.Context) (*core.Runtime, error) {
	defaultRTMu.Lock()
	defer defaultRTMu.Unlock()
	if defaultRT != nil {
		return defaultRT, nil
	}
	rt, err := core.NewRuntime(ctx, core.RuntimeConfig{})
	if err != nil {
		return nil, err
	}
	defaultRT = rt
	return rt, nil
}

// SessionID is the session this client syncs.
func (c *Client) SessionID() string { return c.cfg.SessionID }

// View returns the current view (see View: it never changes, and its
// messages are shared and read-only).
func (c *Client) View() View {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view
}

// Status is the connection status (synccore.Status*).
func (c *Client) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view.Status
}

// Err is why the client stopped by itself (a core that could not be
// rebuilt), or nil while it runs or after a plain Close.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Digest is the core's digest of the view's messages, comparable with the
// server's digest of the same range.
func (c *Client) Digest(ctx context.Context) (string, error) {
	var d string
	err := c.request(ctx, func() error {
		var err error
		d, err = c.core.Digest()
		return err
	})
	return d, err
}

// Watch calls fn after every change of the view, in order, with the view
// and what changed (synccore.Changes): text that grew is given as the text
// appended, so a renderer that appends it pays for the delta, not for the
// message. Updates are never coalesced away: a watcher that falls more
// than a few thousand updates behind gets one update with Changes.Reset
// and every message whole instead of the ones it missed. fn runs on the
// goroutine of Subscribe's listeners. The returned function stops it.
func (c *Client) Watch(fn func(Update)) (stop func()) {
	return c.addSubscriber(subscriber{watch: fn})
}

// Subscribe calls fn with the newest view after changes, in order, from one
// goroutine dedicated to subscribers (never the one that runs the core, so
// a slow fn delays only other subscribers, and fn may call any method).
// Views published while subscribers run coalesce: fn sees the newest, not
// every intermediate one; the last call after Close sees status closed,
// possibly after Close returned. The returned function unsubscribes; a
// call already under way may still finish after it returns.
func (c *Client) Subscribe(fn func(View)) (unsubscribe func()) {
	return c.addSubscriber(subscriber{fn: fn})
}

func (c *Client) addSubscriber(s subscriber) (remove func()) {
	c.mu.Lock()
	c.nextSub++
	id := c.nextSub
	s.id = id
	c.subs = append(c.subs, s)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, s := range c.subs {
			if s.id == id {
				c.subs = append(c.subs[:i:i], c.subs[i+1:]...)
				return
			}
		}
	}
}

// WaitFor blocks until cond holds for the current view, the client is
// closed, or ctx ends. cond runs on the caller's goroutine.
func (c *Client) WaitFor(ctx context.Context, cond func(View) bool) error {
	for {
		c.mu.Lock()
		v, ch, err := c.view, c.changed, c.err
		c.mu.Unlock()
		if cond(v) {
			return nil
		}
		if v.Status == synccore.StatusClosed {
			if err != nil {
				return err
			}
			return errClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// LoadOlder reads the page of history before the oldest message held and
// waits until it is in the view (or the read failed; the view then says
// HasMoreOlder still). It returns at once when there is nothing older.
func (c *Client) LoadOlder(ctx context.Context) error {
	if err := c.handle(ctx, synccore.Event{Type: synccore.EvLoadOlder}); err != nil {
		return err
	}
	return c.WaitFor(ctx, func(v View) bool { return !v.LoadingOlder })
}

// SetIncludeInternal shows or hides internal messages and re-reads.
func (c *Client) SetIncludeInternal(ctx context.Context, include bool) error {
	return c.handle(ctx, synccore.Event{Type: synccore.EvSetIncludeInternal, IncludeInternal: include})
}

// Reconnect tries to connect now when the client waits to reconnect
// (status backoff), instead of at the end of its backoff: call it when the
// network is known to be back. It does nothing while the client is
// connecting, syncing or live.
func (c *Client) Reconnect(ctx context.Context) error {
	return c.request(ctx, c.reconnectNow)
}

// Messages reads a page of history directly from the server (not from the
// view): the newest limit messages before beforeSequence (0: the head).
func (c *Client) Messages(ctx context.Context, limit int, beforeSequence int64, includeInternal bool) (synccore.MessagePage, error) {
	return c.api.Messages(ctx, c.cfg.SessionID, limit, beforeSequence, includeInternal)
}

// Send posts a visible user message to the session.
func (c *Client) Send(ctx context.Context, parts ...synccore.Part) (synccore.Message, error) {
	return c.api.Send(ctx, c.cfg.SessionID, parts...)
}

// SendWith posts a user message with options: visibility, your own
// Idempotency-Key, retries (API.SendWith).
func (c *Client) SendWith(ctx context.Context, parts []synccore.Part, opts SendOptions) (synccore.Message, error) {
	return c.api.SendWith(ctx, c.cfg.SessionID, parts, opts)
}

// Answer answers a pending interaction (see Approval and Reply).
func (c *Client) Answer(ctx context.Context, interactionID string, response InteractionResponse) (synccore.Message, error) {
	return c.api.Answer(ctx, c.cfg.SessionID, interactionID, response)
}

// Action runs a session operation (ActionStop, ActionSetModel,
// ActionSetApprovalMode, ActionRetry; see API.Action).
func (c *Client) Action(ctx context.Context, actionType ActionType, value string) (synccore.Message, error) {
	return c.api.Action(ctx, c.cfg.SessionID, actionType, value)
}

// API is the HTTP helper the client uses, for calls on other sessions.
func (c *Client) API() *API { return c.api }

// Close stops syncing, closes the connection and the core, and waits for
// the client's goroutine to end. It is safe to call more than once.
func (c *Client) Close() error {
	c.cancel()
	<-c.done
	<-c.obDone
	if c.wcache != nil {
		<-c.wcache.done
	}
	return nil
}

// handle feeds ev to the core through the loop and waits until the view
// reflects it.
func (c *Client) handle(ctx context.Context, ev synccore.Event) error {
	return c.post(ctx, loopEvent{kind: evCaller, ev: ev})
}

// request runs fn on the loop goroutine, between events.
func (c *Client) request(ctx context.Context, fn func() error) error {
	return c.post(ctx, loopEvent{kind: evFunc, fn: fn})
}

// post sends le to the loop and waits for its answer.
func (c *Client) post(ctx context.Context, le loopEvent) error {
	le.ack = make(chan error, 1)
	select {
	case c.events <- le:
	case <-c.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-le.ack:
		return err
	case <-c.done:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publish installs a new view and wakes waiters and subscribers; ch is
// what changed, for the watchers.
func (c *Client) publish(v View, ch *synccore.Changes) {
	c.mu.Lock()
	c.view = v
	close(c.changed)
	c.changed = make(chan struct{})
	if ch != nil && c.hasWatchers() {
		if len(c.updates) >= maxUpdates {
			c.updates, c.overflow = c.updates[:0], true
		}
		c.updates = append(c.updates, Update{View: v, Changes: *ch})
	}
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default: // a wake-up is pending: it will read this view
	}
}

func (c *Client) hasWatchers() bool {
	for _, s := range c.subs {
		if s.watch != nil {
			return true
		}
	}
	return false
}

// notifySubscribers calls the subscribers with the newest view, and the
// watchers with every update, after every wake-up, until the client is
// closed and the final view delivered.
func (c *Client) notifySubscribers() {
	deliver := func() {
		c.mu.Lock()
		v := c.view
		subs := append([]subscriber(nil), c.subs...)
		updates := c.updates
		if c.overflow {
			updates = []Update{{View: v, Changes: resetChanges(v)}}
			c.overflow = false
		}
		c.updates = nil
		c.mu.Unlock()
		for _, s := range subs {
			if s.fn != nil {
				s.fn(v)
				continue
			}
			for _, u := range updates {
				s.watch(u)
			}
		}
	}
	for {
		select {
		case <-c.notify:
			deliver()
		case <-c.done:
			select {
			case <-c.notify:
				deliver()
			default:
			}
			return
		}
	}
}

// resetChanges is the update that stands for every update a slow watcher
// missed: the view, every message whole.
func resetChanges(v View) synccore.Changes {
	return synccore.Changes{Status: v.Status, Total: v.Total, HasMoreOlder: v.HasMoreOlder,
		NextBeforeSequence: v.NextBeforeSequence, LoadingOlder: v.LoadingOlder,
		IncludeInternal: v.IncludeInternal, Reset: true, Messages: wholeMessages(v.Messages)}
}

// stop records why the client stopped by itself.
func (c *Client) stop(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// isClosedErr reports whether err means the client is closed.
func isClosedErr(err error) bool {
	return errors.Is(err, errClosed)
}

// jitter is the host's randomness for the core's backoff, 0..1000. The
// core has none of its own, so tests of the core stay deterministic.
func jitter(r *rand.Rand) int64 { return r.Int64N(1001) }

// backoff is the delay before the n-th rebuild of a broken core in a row.
func backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := 250 * time.Millisecond << min(n-2, 7)
	return min(d, 30*time.Second)
}
