package session

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/internal/cluster"
	"github.com/agentsync/agentsync/server/internal/composer"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/filetool"
	"github.com/agentsync/agentsync/server/internal/natsfan"
	"github.com/agentsync/agentsync/server/internal/obs"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// Manager runs every live session of one store. A session becomes live (in
// memory, with its fan-out hub) the first time it is used.
type Manager struct {
	onTreeChanged func(root string, sequence int64) // nil: nobody listens
	onSession     func(owner, sessionID string, deleted bool, running *bool)
	store         store.Store
	models        model.Registry
	defModel      string
	tools         *model.ToolRegistry
	files         composer.Files // reads user files for the model
	toolTime      time.Duration
	toolOut       int
	log           *slog.Logger
	limits        fanout.Limits
	speed         model.Speed
	now           func() int64
	maxSteps      int
	// interactionTimeout is Config.InteractionTimeout (0: never).
	interactionTimeout time.Duration

	// base is the context of turns and of their commits: a turn outlives
	// the request that started it, and its final commit must run even when
	// the turn itself was cancelled.
	base context.Context

	mu      sync.Mutex
	live    map[string]*live
	lru     *list.List // of *live, most recently used first (evict.go)
	unloads int64      // sessions unloaded so far (a load's read may be stale)
	closing bool

	idleTimeout time.Duration
	maxLoaded   int
	stopSweep   chan struct{} // closed by Shutdown; nil without IdleTimeout
	stopOrphans chan struct{} // closed by Shutdown; nil on one node (orphans.go)
	evicted     atomic.Int64

	// keeper holds this node's session leases in a cluster (cluster.go);
	// nil on a single node.
	keeper *cluster.Keeper
	node   string
	// bus carries frames to and from other nodes (follow.go); nil
	// without NATS.
	bus *natsfan.Bus

	obs       obs.Observer
	tracer    obs.Tracer // nil: no spans
	storeName string

	turns   sync.WaitGroup // running turn goroutines
	running atomic.Int64   // how many; tests wait for 0
}

// NewManager returns a manager for cfg.Store after closing every agent
// message a crash left streaming (error part "interrupted").
func NewManager(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Store == nil {
		return nil, errors.New("session: Config.Store is nil")
	}
	m := &Manager{
		store:              cfg.Store,
		onTreeChanged:      cfg.OnTreeChanged,
		onSession:          cfg.OnSessionChanged,
		models:             cfg.Models,
		defModel:           cfg.DefaultModel,
		log:                cfg.Logger,
		limits:             fanout.Limits{Frames: cfg.QueueLimit, Bytes: cfg.QueueBytes, Fold: cfg.FoldBytes, Pacer: cfg.Pacer},
		speed:              cfg.Speed,
		now:                cfg.Now,
		maxSteps:           cfg.MaxSteps,
		interactionTimeout: cfg.InteractionTimeout,
		base:               context.WithoutCancel(ctx),
		live:               map[string]*live{},
		lru:                newLRU(),
		idleTimeout:        cfg.IdleTimeout,
		maxLoaded:          cfg.MaxLoaded,
		toolTime:           cfg.ToolTimeout,
		toolOut:            cfg.MaxToolOutput,
		files:              composer.Files{Blobs: cfg.Blobs, Budget: cfg.FileBudget},
		obs:                obs.Or(cfg.Observer),
		tracer:             cfg.Tracer,
		storeName:          cfg.StoreName,
	}
	if m.storeName == "" {
		m.storeName = obs.StoreName(cfg.Store)
	}
	m.limits.OnResync = m.obs.Resync
	if m.models == nil {
		m.models = scripted.Registry()
	}
	if m.defModel == "" {
		m.defModel = model.DefaultName
	}
	if _, ok := m.models[m.defModel]; !ok {
		return nil, fmt.Errorf("session: default model %q is not among %v", m.defModel, m.models.Names())
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	if m.now == nil {
		m.now = func() int64 { return time.Now().UnixMilli() }
	}
	if m.maxSteps <= 0 {
		m.maxSteps = 32
	}
	tools := cfg.Tools
	if tools == nil {
		tools = scripted.DemoTools()
	}
	reg, err := model.NewToolRegistry(tools...)
	if err != nil {
		return nil, fmt.Errorf("session: tools: %w", err)
	}
	if cfg.Blobs != nil && cfg.WriteFileMax >= 0 && reg.Get(filetool.Name) == nil {
		// With a blob store the model can write files (a tool of that
		// name given in Tools takes its place).
		if err := reg.Add(filetool.New(cfg.Blobs, cfg.WriteFileMax)); err != nil {
			return nil, fmt.Errorf("session: tools: %w", err)
		}
	}
	m.tools = reg
	if m.toolTime <= 0 {
		m.toolTime = DefaultToolTimeout
	}
	if m.toolOut <= 0 {
		m.toolOut = DefaultMaxToolOutput
	}
	if c := cfg.Cluster; c != nil {
		if c.Node == "" {
			return nil, errors.New("session: Config.Cluster.Node is empty")
		}
		// Other nodes may be serving sessions now: each is recovered when
		// this node takes its lease (claim), never all at once.
		m.node = c.Node
		m.keeper = cluster.New(cluster.Config{Store: m.store, Node: c.Node, TTL: c.LeaseTTL, Logger: m.log, Observer: m.obs})
		if c.NATS != nil {
			m.bus = natsfan.New(c.NATS, m.log)
		}
		ttl := c.LeaseTTL
		if ttl <= 0 {
			ttl = cluster.DefaultTTL
		}
		m.stopOrphans = make(chan struct{})
		go m.adoptOrphans(ttl, m.stopOrphans)
		m.startSweep()
		return m, nil
	}
	recovered, err := m.store.RecoverStreaming(ctx, interruptedPart)
	if err != nil {
		return nil, fmt.Errorf("session: crash recovery: %w", err)
	}
	if len(recovered) > 0 {
		m.log.Info("closed messages left streaming", "count", len(recovered))
	}
	if cfg.ResumeInterrupted {
		m.resume(ctx, recovered)
	}
	m.startSweep()
	return m, nil
}

func (m *Manager) startSweep() {
	if m.idleTimeout > 0 {
		m.stopSweep = make(chan struct{})
		go m.sweepIdle(m.stopSweep)
	}
}

// resume retries the turns a crash interrupted, one per session (the
// newest; retry checks it is still the session's last turn).
func (m *Manager) resume(ctx context.Context, recovered []synccore.Message) {
	done := map[string]bool{}
	for i := len(recovered) - 1; i >= 0; i-- {
		sid := recovered[i].SessionID
		if done[sid] {
			continue
		}
		done[sid] = true
		if _, err := m.Action(ctx, sid, Action{ActionType: ActionRetry}); err != nil {
			m.log.Warn("resume interrupted turn", "session_id", sid, "err", err)
			continue
		}
		m.log.Info("resumed interrupted turn", "session_id", sid)
	}
}

// Models lists the model names sessions may use, the default first.
func (m *Manager) Models() []string {
	out := []string{m.defModel}
	for _, n := range m.models.Names() {
		if n != m.defModel {
			out = append(out, n)
		}
	}
	return out
}

// CreateOwnedSession creates an empty session of owner (a principal, see
// server/auth) with a model ("" = the default).
func (m *Manager) CreateOwnedSession(ctx context.Context, owner, modelName string) (store.Session, error) {
	return m.CreateOwnedSessionID(ctx, newID("ses_"), owner, modelName)
}

// CreateOwnedSessionID is CreateOwnedSession with the session id chosen
// by the caller (an AG-UI threadId); CodeConflict if a session has it.
func (m *Manager) CreateOwnedSessionID(ctx context.Context, id, owner, modelName string) (store.Session, error) {
	if modelName == "" {
		modelName = m.defModel
	}
	if _, ok := m.models[modelName]; !ok {
		return store.Session{}, synccore.Errorf(synccore.CodeBadRequest, "unknown model %q (known: %v)", modelName, m.models.Names())
	}
	if err := m.open(); err != nil {
		return store.Session{}, err
	}
	now := m.now()
	sess := store.Session{
		SessionID:    id,
		Model:        modelName,
		ApprovalMode: ApprovalAuto,
		CreatedAt:    now,
		UpdatedAt:    now,
		Owner:        owner,
	}
	if err := m.store.CreateSession(ctx, sess); err != nil {
		return store.Session{}, fmt.Errorf("session: create: %w", err)
	}
	m.sessionChanged(owner, id, false, nil)
	return sess, nil
}

// ListOwnedSessions lists owner's sessions, newest first.
func (m *Manager) ListOwnedSessions(ctx context.Context, owner string, limit int) ([]store.Session, error) {
	if limit < 0 {
		return nil, synccore.Errorf(synccore.CodeBadRequest, "limit %d is negative", limit)
	}
	return m.store.ListOwnedSessions(ctx, owner, limit)
}

// Messages reads one page of the session's committed snapshot. A zero
// Limit means the default; a larger one than the maximum is capped.
func (m *Manager) Messages(ctx context.Context, sessionID string, q store.PageQuery) (synccore.MessagePage, error) {
	switch {
	case q.Limit < 0:
		return synccore.MessagePage{}, synccore.Errorf(synccore.CodeBadRequest, "limit %d is negative", q.Limit)
	case q.BeforeSequence < 0:
		return synccore.MessagePage{}, synccore.Errorf(synccore.CodeBadRequest, "before_sequence %d is negative", q.BeforeSequence)
	case q.Limit == 0:
		q.Limit = synccore.DefaultPageLimit
	case q.Limit > synccore.MaxPageLimit:
		q.Limit = synccore.MaxPageLimit
	}
	return m.store.Messages(ctx, sessionID, q)
}

// Digest is wire.DigestMessages over the session's whole committed
// snapshot (visible messages, plus internal ones if asked): what a client's
// view digest must equal once the session is idle.
func (m *Manager) Digest(ctx context.Context, sessionID string, includeInternal bool) (string, error) {
	hist, err := m.store.History(ctx, sessionID)
	if err != nil {
		return "", err
	}
	msgs := hist[:0:0]
	for _, msg := range hist {
		if includeInternal || msg.Visibility != synccore.VisibilityInternal {
			msgs = append(msgs, msg)
		}
	}
	return wire.DigestMessages(msgs), nil
}

// Subscribe opens a subscription: hello, then the streaming projection
// (mid-stream join), then live frames.
// With NATS in a cluster, any node streams any session (follow.go);
// without, only the node that serves it.
func (m *Manager) Subscribe(ctx context.Context, sessionID string) (*fanout.Subscriber, error) {
	if m.bus != nil {
		s, err := m.session(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		defer m.release(s)
		return s.subscribeAnywhere(ctx)
	}
	s, err := m.served(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer m.release(s)
	return s.subscribe()
}

// errStopping refuses what reaches the manager after Shutdown (503).
var errStopping = synccore.Errorf(synccore.CodeClosed, "the server is shutting down")

// Shutdown stops every turn (their messages close with an error part
// "shutdown"), waits for them, then ends every subscription. Later calls
// that would change or load a session fail with CodeClosed.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if !m.closing && m.stopSweep != nil {
		close(m.stopSweep)
	}
	if !m.closing && m.stopOrphans != nil {
		close(m.stopOrphans)
	}
	m.closing = true
	lives := make([]*live, 0, len(m.live))
	for _, s := range m.live {
		lives = append(lives, s)
	}
	m.mu.Unlock()

	for _, s := range lives {
		s.shutdown()
	}
	done := make(chan struct{})
	go func() { m.turns.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("session: shutdown: turns still running: %w", ctx.Err())
	}
	for _, s := range lives {
		s.hub.Close()
	}
	if m.bus != nil {
		m.bus.Close()
	}
	if m.keeper != nil {
		// After the turns' last commits: other nodes may take the
		// sessions at once rather than after the lease TTL.
		err = errors.Join(err, m.keeper.Close(ctx))
	}
	return err
}

func (m *Manager) open() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return errStopping
	}
	return nil
}

// session returns the live session, loading it on first use, and pins it
// in memory until the caller's release(s). CodeNotFound for an unknown id.
func (m *Manager) session(ctx context.Context, id string) (*live, error) {
	for {
		m.mu.Lock()
		if m.closing {
			m.mu.Unlock()
			return nil, errStopping
		}
		s, ok := m.live[id]
		if ok {
			s.pins++
		}
		unloads := m.unloads
		m.mu.Unlock()
		if ok {
			return s, nil
		}
		if id == "" {
			return nil, synccore.Errorf(synccore.CodeNotFound, "session id is empty")
		}
		rec, err := m.store.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		if s, ok := m.load(id, rec, unloads); ok {
			return s, nil
		}
		// A session left memory since the read: it may have been this
		// one, loaded, written and evicted meanwhile, so rec may miss its
		// last commits. Read again.
	}
}

// load puts the session read as rec in memory, pinned, unless another
// request loaded it meanwhile (that one is returned, pinned), or a session
// was unloaded since the read (m.unloads moved past unloads): then false.
func (m *Manager) load(id string, rec store.Session, unloads int64) (*live, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.live[id]; ok {
		s.pins++
		return s, true
	}
	if m.unloads != unloads {
		return nil, false
	}
	s := &live{m: m, id: id, rec: rec, owner: rec.Owner, hub: fanout.NewHub(m.limits), log: m.log.With("session_id", id)}
	s.pins = 1
	m.live[id] = s
	m.track(s)
	return s, true
}

// served is session() for a use that changes the session or streams it:
// in a cluster this node must hold its lease (claim).
func (m *Manager) served(ctx context.Context, id string) (*live, error) {
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.claim(ctx); err != nil {
		m.release(s)
		return nil, err
	}
	return s, nil
}
