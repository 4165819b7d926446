// Package signals carries a subscription's signals: ephemeral notices
// beside the numbered frames (docs/protocol.md §4.6). A signal is never
// stored and never numbered, so it cannot disturb a subscription's seq
// continuity; a subscriber that misses one loses nothing it cannot read
// again (the alternatives of a path are one GET away).
//
// The one signal today tells a subscriber that a position of its session's
// path gained or lost an alternative (a fork made or deleted anywhere in
// its conversation). A change of the tree is announced once per
// conversation, on the bus in a cluster; each node then computes, for the
// sessions its own subscribers follow, the count at that position from the
// store, so the signal a client reads is always true of its own path.
package signals

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/agentsync/agentsync/server/internal/bus"
)

// Subject carries tree changes between the nodes of a cluster.
const Subject = "agentsync.signals.tree"

// queueLen bounds the signals waiting for one subscriber's writer; one
// that far behind drops the newest (a client re-reads the alternatives on
// every subscription, so nothing is lost for good).
const queueLen = 16

// countTimeout bounds the store reads of one tree change.
const countTimeout = 5 * time.Second

// Counter tells how many alternatives position sequence of the session's
// path has and which one (0-based) the path takes: 1 and 0 when it has
// only its own.
type Counter func(ctx context.Context, sessionID string, sequence int64) (count, index int, err error)

// Alternatives is the signal a subscriber reads when a position of its
// path gained or lost an alternative.
type Alternatives struct {
	Signal   string `json:"signal"` // "alternatives"
	Sequence int64  `json:"sequence"`
	Count    int    `json:"count"`
	Index    int    `json:"index"`
}

// treeChange is what crosses the bus: the conversation whose tree changed
// and the position, from which node (a node ignores its own).
type treeChange struct {
	Node     string `json:"node"`
	Root     string `json:"root"`
	Sequence int64  `json:"sequence"`
}

// Hub holds one node's signal subscribers.
type Hub struct {
	count Counter
	conn  bus.Conn // nil: one node
	node  string
	log   *slog.Logger
	subs  []bus.Subscription
	now   func() time.Time
	stop  chan struct{}

	mu        sync.Mutex
	bySession map[string]map[*Sub]struct{}
	byRoot    map[string]map[string]struct{} // root -> its sessions with subscribers
	sessions  map[string]*sessionPresence
	closed    bool
	wg        sync.WaitGroup
}

// New starts a hub; with conn it also follows the other nodes' tree
// changes and presence.
func New(count Counter, conn bus.Conn, node string, log *slog.Logger) (*Hub, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{
		count: count, conn: conn, node: node, log: log, now: time.Now, stop: make(chan struct{}),
		bySession: map[string]map[*Sub]struct{}{}, byRoot: map[string]map[string]struct{}{},
		sessions: map[string]*sessionPresence{},
	}
	if conn == nil {
		return h, nil
	}
	tree, err := conn.Subscribe(Subject, func(m *bus.Msg) {
		var c treeChange
		if err := json.Unmarshal(m.Data, &c); err != nil || c.Node == node {
			return
		}
		h.dispatch(c.Root, c.Sequence)
	})
	if err != nil {
		return nil, err
	}
	presence, err := conn.Subscribe(PresenceSubject, func(m *bus.Msg) { h.heardShare(m.Data) })
	if err != nil {
		_ = tree.Unsubscribe()
		return nil, err
	}
	h.subs = []bus.Subscription{tree, presence}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.heartbeat(h.stop)
	}()
	return h, nil
}

// Sub is one subscription's signals, JSON-encoded, in C.
type Sub struct {
	C         chan []byte
	h         *Hub
	root      string
	session   string
	principal string
}

// send queues data for the subscription's writer, or drops it when the
// writer is queueLen behind.
func (s *Sub) send(data []byte) {
	select {
	case s.C <- data:
	default:
	}
}

// Subscribe registers a subscriber of sessionID, a session of the
// conversation root, acting for principal: it counts among the session's
// viewers until Close.
func (h *Hub) Subscribe(root, sessionID, principal string) *Sub {
	s := &Sub{C: make(chan []byte, queueLen), h: h, root: root, session: sessionID, principal: principal}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bySession[sessionID] == nil {
		h.bySession[sessionID] = map[*Sub]struct{}{}
	}
	h.bySession[sessionID][s] = struct{}{}
	if h.byRoot[root] == nil {
		h.byRoot[root] = map[string]struct{}{}
	}
	h.byRoot[root][sessionID] = struct{}{}
	// A new subscriber gets the presence now, even if it did not change.
	p := h.presence(sessionID)
	p.joined = append(p.joined, s)
	h.changedLocked(sessionID)
	return s
}

// Close unregisters s; it is idempotent.
func (s *Sub) Close() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := h.bySession[s.session]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(h.bySession, s.session)
		delete(h.byRoot[s.root], s.session)
		if len(h.byRoot[s.root]) == 0 {
			delete(h.byRoot, s.root)
		}
	}
	h.changedLocked(s.session)
}

// subsOf is sessionID's local subscribers. Caller holds h.mu.
func (h *Hub) subsOf(sessionID string) map[*Sub]struct{} { return h.bySession[sessionID] }

// TreeChanged announces that position sequence of the conversation root
// gained or lost an alternative: this node's subscribers of the
// conversation are told at once, the other nodes' through the bus. It
// does not wait for either.
func (h *Hub) TreeChanged(root string, sequence int64) {
	if h.conn != nil {
		data, _ := json.Marshal(treeChange{Node: h.node, Root: root, Sequence: sequence})
		if err := h.conn.Publish(Subject, data); err != nil {
			h.log.Warn("publish a tree change", "root", root, "err", err)
		}
	}
	h.dispatch(root, sequence)
}

// dispatch tells each local subscriber of the conversation its own path's
// count at sequence, reading the store off the caller's goroutine.
func (h *Hub) dispatch(root string, sequence int64) {
	h.mu.Lock()
	sessions := make(map[string][]*Sub, len(h.byRoot[root]))
	for id := range h.byRoot[root] {
		for s := range h.bySession[id] {
			sessions[id] = append(sessions[id], s)
		}
	}
	closed := h.closed
	if len(sessions) > 0 && !closed {
		h.wg.Add(1)
	}
	h.mu.Unlock()
	if len(sessions) == 0 || closed {
		return
	}
	go func() {
		defer h.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
		defer cancel()
		for id, subs := range sessions {
			count, index, err := h.count(ctx, id, sequence)
			if err != nil {
				// Deleted, or a position past its head: nothing to tell.
				continue
			}
			data, _ := json.Marshal(Alternatives{Signal: "alternatives", Sequence: sequence, Count: count, Index: index})
			for _, s := range subs {
				s.send(data)
			}
		}
	}()
}

// Close stops following the bus and the timers, and waits for the
// dispatches under way.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	for _, p := range h.sessions {
		if p.timer != nil {
			p.timer.Stop()
		}
	}
	h.mu.Unlock()
	close(h.stop)
	for _, s := range h.subs {
		_ = s.Unsubscribe()
	}
	h.wg.Wait()
}
