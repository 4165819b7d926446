package session

import (
	"container/list"
	"time"
)

// Bounded memory: a session is loaded (a *live in m.live) while something
// uses it, and unloaded when it has been idle for Config.IdleTimeout, or
// when more than Config.MaxLoaded sessions are loaded (least recently used
// first). Unloading loses nothing: every committed message is in the
// store, and the next request or subscription loads the session again.
// Only a session nobody can tell apart from an unloaded one is evicted:
// no request inside the manager (pins), no running turn (which includes a
// turn waiting on an approval), no subscriber.

// evictable reports whether s may leave memory. Caller holds m.mu. A
// session whose lock is held (a turn committing) is busy: TryLock keeps
// the manager's lock from waiting on it.
func (m *Manager) evictable(s *live) bool {
	if s.pins > 0 || !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	return s.turn == nil && !s.closing && s.hub.Len() == 0
}

// unload drops s from memory. Caller holds m.mu.
func (m *Manager) unload(s *live) {
	if m.live[s.id] == s {
		delete(m.live, s.id)
		m.unloads++
	}
	s.releaseLease()
	s.stopFollow()
	if s.lru != nil {
		m.lru.Remove(s.lru)
		s.lru = nil
	}
}

// release ends a use of s that session() began: s becomes the most
// recently used, and evictable again once nothing else holds it.
func (m *Manager) release(s *live) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.pins--
	s.lastUsed = time.Now()
	if s.lru != nil {
		m.lru.MoveToFront(s.lru)
	}
}

// track puts a newly loaded s in the LRU list, then evicts the least
// recently used evictable sessions while more than maxLoaded are loaded.
// Caller holds m.mu.
func (m *Manager) track(s *live) {
	s.lastUsed = time.Now()
	s.lru = m.lru.PushFront(s)
	if m.maxLoaded <= 0 {
		return
	}
	for e := m.lru.Back(); e != nil && len(m.live) > m.maxLoaded; {
		prev := e.Prev()
		if c := e.Value.(*live); m.evictable(c) {
			m.unload(c)
			m.evicted.Add(1)
		}
		e = prev
	}
}

// evictIdle unloads every evictable session unused since before cutoff.
func (m *Manager) evictIdle(cutoff time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for e := m.lru.Back(); e != nil; {
		prev := e.Prev()
		c := e.Value.(*live)
		if !c.lastUsed.Before(cutoff) {
			break // the rest were used later
		}
		if m.evictable(c) {
			m.unload(c)
			m.evicted.Add(1)
		}
		e = prev
	}
}

// sweepIdle evicts idle sessions until stop is closed, checking four times
// per idle timeout (at most every 30 s, at least every 10 ms).
func (m *Manager) sweepIdle(stop <-chan struct{}) {
	every := min(max(m.idleTimeout/4, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			m.evictIdle(now.Add(-m.idleTimeout))
		}
	}
}

// Loaded is how many sessions are in memory now.
func (m *Manager) Loaded() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// Evicted is how many times a session left memory since the manager
// started (a session can leave, come back and leave again).
func (m *Manager) Evicted() int64 { return m.evicted.Load() }

// newLRU is the empty recency list of loaded sessions.
func newLRU() *list.List { return list.New() }

// Running is how many turns are running now.
func (m *Manager) Running() int64 { return m.running.Load() }
