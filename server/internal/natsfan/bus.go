package natsfan

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentsync/agentsync/server/internal/bus"
	"github.com/agentsync/agentsync/server/internal/fanout"
)

// Bus is one node's use of its NATS connection: the sessions it publishes
// (Publisher) and follows (Follower).
type Bus struct {
	nc  bus.Conn
	log *slog.Logger

	status     <-chan bus.Status // the connection's state changes
	stopStatus func()            // stops them
	done       chan struct{}     // the status watcher ended

	mu      sync.Mutex
	follows map[*Follower]struct{}
	pubs    map[*Publisher]struct{}
}

// New returns a bus over nc, which the caller keeps open until Close and
// closes after it. Without reconnects on nc, a lost connection stays lost:
// the caller should turn them on (nats.MaxReconnects(-1)).
func New(nc bus.Conn, log *slog.Logger) *Bus {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	status, stop := nc.StatusChanged()
	b := &Bus{
		nc:         nc,
		log:        log.With("component", "natsfan"),
		status:     status,
		stopStatus: stop,
		done:       make(chan struct{}),
		follows:    map[*Follower]struct{}{},
		pubs:       map[*Publisher]struct{}{},
	}
	go b.watch()
	return b
}

// watch ends every follow when the connection drops (frames published
// while it is down are lost to this node), and, once it is back, tells
// the followers of the sessions this node serves if some of their frames
// could not be published meanwhile.
func (b *Bus) watch() {
	defer close(b.done)
	for st := range b.status {
		if st == bus.Connected {
			b.mu.Lock()
			for p := range b.pubs {
				p.sendMarker()
			}
			b.mu.Unlock()
			continue
		}
		b.log.Warn("NATS connection lost: followers resync", "status", st.String())
		b.endFollows("this node lost its NATS connection: re-read the snapshot")
	}
}

func (b *Bus) endFollows(reason string) {
	b.mu.Lock()
	follows := make([]*Follower, 0, len(b.follows))
	for f := range b.follows {
		follows = append(follows, f)
	}
	b.mu.Unlock()
	for _, f := range follows {
		f.end(fanout.ResyncOwnerChanged, reason)
	}
}

// Close stops watching the connection and ends every follow (each
// subscriber gets a resync frame). It leaves the connection open.
func (b *Bus) Close() {
	b.stopStatus()
	<-b.done
	b.endFollows("this node is stopping: re-read the snapshot")
}

func (b *Bus) track(f *Follower) {
	b.mu.Lock()
	b.follows[f] = struct{}{}
	b.mu.Unlock()
}

func (b *Bus) untrack(f *Follower) {
	b.mu.Lock()
	delete(b.follows, f)
	b.mu.Unlock()
}

// Connected reports whether the connection is up now.
func (b *Bus) Connected() bool { return b.nc.Connected() }

// flush waits up to timeout for the bus to have what was sent so far.
func (b *Bus) flush(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return b.nc.Flush(ctx)
}
