package session

import (
	"context"
	"time"
)

// orphanBatch bounds the sessions one sweep takes over.
const orphanBatch = 32

// adoptOrphans takes over, every third of the lease TTL, the sessions
// whose owner died or stalled with a message streaming (store.Leaser
// .Orphaned): their lease expired and no request came to claim them. The
// claim closes the message (an "interrupted" error part) and publishes it,
// so every message a lost owner left streaming ends done within the TTL
// plus a third of it plus one sweep, whether or not a client writes to the
// session. Nodes racing for one session have one winner; the others find
// its lease held. It ends when stop is closed.
func (m *Manager) adoptOrphans(ttl time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(m.base, ttl)
		ids, err := m.store.Orphaned(ctx, orphanBatch)
		if err != nil {
			m.log.Warn("list orphaned sessions", "err", err)
		}
		for _, id := range ids {
			s, err := m.served(ctx, id)
			if err != nil {
				m.log.Debug("orphaned session not taken over", "session_id", id, "err", err)
				continue
			}
			m.release(s)
			m.log.Info("took over an orphaned session", "session_id", id)
		}
		cancel()
	}
}
