package signals

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/synccore"
)

// ListSubject carries the changes of the session lists between the nodes
// of a cluster (docs/protocol.md, "Session list").
const ListSubject = "agentsync.signals.sessions"

// listQueueLen bounds the changes waiting for one list subscriber's
// writer; one that far behind is ended (Sub.Lagged), and its client,
// reconnecting, reads the whole list again.
const listQueueLen = 256

// SessionChange is what a node tells of one session of a principal: it
// was created, renamed, forked, deleted, or a turn started or ended in it.
type SessionChange struct {
	Node      string `json:"node"`
	Owner     string `json:"owner"`
	SessionID string `json:"session_id"`
	Deleted   bool   `json:"deleted,omitempty"`
	// Running is set when a turn started (true) or ended (false); nil when
	// the change says nothing of it.
	Running *bool `json:"running,omitempty"`
}

// ListEvent is one change a list subscriber reads: the session as the
// store has it now (with Running), or Deleted.
type ListEvent struct {
	Session   store.Session
	Running   bool
	SessionID string
	Deleted   bool
}

// Lists holds one node's subscribers of principals' session lists. A
// change, local or heard on the bus, is handled in order on one
// goroutine: the session is read again from the store (only when someone
// on this node follows its owner's list) so what a subscriber reads is
// the store's state, whatever the order of the changes' causes.
type Lists struct {
	st   store.Store
	conn bus.Conn
	node string
	log  *slog.Logger
	sub  bus.Subscription

	mu      sync.Mutex
	byOwner map[string]map[*ListSub]struct{}
	running map[string]bool // sessions with a turn running, as heard
	queue   []SessionChange
	wake    chan struct{}
	closed  bool
	done    chan struct{}
}

// ListSub is one subscription to a principal's list.
type ListSub struct {
	C      chan ListEvent
	Lagged chan struct{} // closed when C overflowed
	l      *Lists
	owner  string
	lagged bool
}

// NewLists starts the registry; with conn it also hears the other nodes'
// changes.
func NewLists(st store.Store, conn bus.Conn, node string, log *slog.Logger) (*Lists, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Lists{st: st, conn: conn, node: node, log: log, byOwner: map[string]map[*ListSub]struct{}{},
		running: map[string]bool{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	if conn != nil {
		s, err := conn.Subscribe(ListSubject, func(m *bus.Msg) {
			var c SessionChange
			if err := json.Unmarshal(m.Data, &c); err != nil || c.Node == node {
				return
			}
			l.enqueue(c)
		})
		if err != nil {
			return nil, err
		}
		l.sub = s
	}
	go l.work()
	return l, nil
}

// Changed tells the registry of a change on this node: this node's
// subscribers hear it, and the other nodes' through the bus. It does not
// block.
func (l *Lists) Changed(c SessionChange) {
	if l == nil { // "" is an owner too: the shared principal of an open server
		return
	}
	c.Node = l.node
	if l.conn != nil {
		data, _ := json.Marshal(c)
		if err := l.conn.Publish(ListSubject, data); err != nil {
			l.log.Warn("publish a session list change", "session_id", c.SessionID, "err", err)
		}
	}
	l.enqueue(c)
}

func (l *Lists) enqueue(c SessionChange) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	switch {
	case c.Deleted:
		delete(l.running, c.SessionID)
	case c.Running != nil && *c.Running:
		l.running[c.SessionID] = true
	case c.Running != nil:
		delete(l.running, c.SessionID)
	}
	if len(l.byOwner[c.Owner]) == 0 {
		return // nobody here follows that list
	}
	l.queue = append(l.queue, c)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Running tells whether a turn runs in the session, as this node heard.
func (l *Lists) Running(sessionID string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running[sessionID]
}

func (l *Lists) work() {
	defer close(l.done)
	for range l.wake {
		for {
			l.mu.Lock()
			if l.closed {
				l.mu.Unlock()
				return
			}
			if len(l.queue) == 0 {
				l.mu.Unlock()
				break
			}
			c := l.queue[0]
			l.queue = l.queue[1:]
			l.mu.Unlock()
			l.handle(c)
		}
	}
}

func (l *Lists) handle(c SessionChange) {
	ev := ListEvent{SessionID: c.SessionID, Deleted: c.Deleted}
	if !c.Deleted {
		ctx, cancel := context.WithTimeout(context.Background(), countTimeout)
		s, err := l.st.Session(ctx, c.SessionID)
		cancel()
		var te *synccore.Error
		switch {
		case errors.As(err, &te) && te.Code == synccore.CodeNotFound:
			ev.Deleted = true
		case err != nil:
			l.log.Warn("read a session for the session lists", "session_id", c.SessionID, "err", err)
			return
		case s.Owner != c.Owner:
			return
		default:
			ev.Session = s
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ev.Deleted {
		ev.Running = l.running[c.SessionID]
	}
	for s := range l.byOwner[c.Owner] {
		select {
		case s.C <- ev:
		default:
			if !s.lagged {
				s.lagged = true
				close(s.Lagged)
			}
		}
	}
}

// Subscribe registers a subscriber of owner's list. Register first, then
// read the list: no change is missed between the two.
func (l *Lists) Subscribe(owner string) *ListSub {
	s := &ListSub{C: make(chan ListEvent, listQueueLen), Lagged: make(chan struct{}), l: l, owner: owner}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byOwner[owner] == nil {
		l.byOwner[owner] = map[*ListSub]struct{}{}
	}
	l.byOwner[owner][s] = struct{}{}
	return s
}

// Close unregisters s; it is idempotent.
func (s *ListSub) Close() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byOwner[s.owner], s)
	if len(l.byOwner[s.owner]) == 0 {
		delete(l.byOwner, s.owner)
	}
}

// Close stops the registry.
func (l *Lists) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.mu.Unlock()
	if l.sub != nil {
		_ = l.sub.Unsubscribe()
	}
	close(l.wake)
	select {
	case <-l.done:
	case <-time.After(2 * countTimeout):
	}
}

// Done is closed when the registry stops: its subscriptions end.
func (s *ListSub) Done() <-chan struct{} { return s.l.done }
