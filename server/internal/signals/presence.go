package signals

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/agentsync/agentsync/httpwire"
)

// Presence: who follows a session and who is typing in it, told to its
// subscribers as `presence` signals (docs/protocol.md §4.6). A viewer is a
// subscription that asked for signals; typing is what a principal's client
// says with POST .../typing, and lapses after TypingTTL. In a cluster every
// node publishes its own share of a session's presence on the bus when it
// changes and again every PresenceHeartbeat; a node's share it has not
// heard of for PresenceTTL (a node that died) is dropped.

// Subjects and timings of presence.
const (
	PresenceSubject   = "agentsync.signals.presence"
	TypingTTL         = 6 * time.Second
	PresenceHeartbeat = 10 * time.Second
	PresenceTTL       = 3 * PresenceHeartbeat
	// presenceInterval bounds the presence signals of one session: at
	// most one per interval, the newest state (a burst of joins, leaves
	// and keystrokes is one signal).
	presenceInterval = 250 * time.Millisecond
)

// Viewer is one principal in a presence signal: how many subscriptions it
// has open on the session (tabs, devices), across nodes, and whether it is
// typing.
type Viewer = httpwire.Viewer

// Presence is the signal.
type Presence struct {
	Signal  string   `json:"signal"` // "presence"
	Viewers []Viewer `json:"viewers"`
}

// share is one node's part of a session's presence, as it crosses the bus.
type share struct {
	Node    string   `json:"node"`
	Session string   `json:"session"`
	Viewers []Viewer `json:"viewers"`
}

// sessionPresence is what a hub knows of one session's presence.
type sessionPresence struct {
	typing map[string]time.Time // local: principal -> when it lapses
	remote map[string]remoteShare
	timer  *time.Timer // a signal is due (coalescing), nil: none
	last   []byte      // the last signal sent, so an unchanged one is not sent again
	joined []*Sub      // subscribed since: they get the next signal, changed or not
}

type remoteShare struct {
	viewers []Viewer
	heard   time.Time
}

// presence returns the state of sessionID, creating it. Caller holds h.mu.
func (h *Hub) presence(sessionID string) *sessionPresence {
	p := h.sessions[sessionID]
	if p == nil {
		p = &sessionPresence{typing: map[string]time.Time{}, remote: map[string]remoteShare{}}
		h.sessions[sessionID] = p
	}
	return p
}

// Typing records that principal is typing in sessionID (or stopped).
func (h *Hub) Typing(sessionID, principal string, typing bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.presence(sessionID)
	if !typing {
		delete(p.typing, principal)
		h.changedLocked(sessionID)
		return
	}
	until, was := p.typing[principal]
	p.typing[principal] = h.now().Add(TypingTTL)
	if was && h.now().Before(until) {
		return // still typing: nothing to tell, the lapse moves on
	}
	h.changedLocked(sessionID)
	// Tell when it lapses, if nothing is said before (a later Typing
	// moved the lapse: the check then finds it still typing and sends an
	// unchanged signal, which flushPresence drops).
	time.AfterFunc(TypingTTL+presenceInterval, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.changedLocked(sessionID)
	})
}

// localShare is this node's part of sessionID's presence, sorted by
// principal. Caller holds h.mu.
func (h *Hub) localShare(sessionID string) []Viewer {
	byPrincipal := map[string]*Viewer{}
	get := func(principal string) *Viewer {
		v := byPrincipal[principal]
		if v == nil {
			v = &Viewer{Principal: principal}
			byPrincipal[principal] = v
		}
		return v
	}
	for s := range h.subsOf(sessionID) {
		get(s.principal).Connections++
	}
	now := h.now()
	if p := h.sessions[sessionID]; p != nil {
		for principal, until := range p.typing {
			if now.Before(until) {
				get(principal).Typing = true
			}
		}
	}
	return sorted(byPrincipal)
}

// merged is sessionID's presence across the nodes. Caller holds h.mu.
func (h *Hub) merged(sessionID string) []Viewer {
	byPrincipal := map[string]*Viewer{}
	add := func(vs []Viewer) {
		for _, v := range vs {
			m := byPrincipal[v.Principal]
			if m == nil {
				m = &Viewer{Principal: v.Principal}
				byPrincipal[v.Principal] = m
			}
			m.Connections += v.Connections
			m.Typing = m.Typing || v.Typing
		}
	}
	add(h.localShare(sessionID))
	if p := h.sessions[sessionID]; p != nil {
		cutoff := h.now().Add(-PresenceTTL)
		for node, r := range p.remote {
			if r.heard.Before(cutoff) {
				delete(p.remote, node)
				continue
			}
			add(r.viewers)
		}
	}
	return sorted(byPrincipal)
}

func sorted(byPrincipal map[string]*Viewer) []Viewer {
	out := make([]Viewer, 0, len(byPrincipal))
	for _, v := range byPrincipal {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b Viewer) int { return strings.Compare(a.Principal, b.Principal) })
	return out
}

// changedLocked schedules a presence signal of sessionID (and this node's
// share on the bus) within presenceInterval. Caller holds h.mu.
func (h *Hub) changedLocked(sessionID string) {
	p := h.presence(sessionID)
	if p.timer != nil || h.closed {
		return
	}
	p.timer = time.AfterFunc(presenceInterval, func() { h.flushPresence(sessionID, true) })
}

// flushPresence sends sessionID's merged presence to its local
// subscribers if it changed and, when publish is set, this node's share to
// the others.
func (h *Hub) flushPresence(sessionID string, publish bool) {
	h.mu.Lock()
	p := h.sessions[sessionID]
	if p == nil {
		h.mu.Unlock()
		return
	}
	p.timer = nil
	local := h.localShare(sessionID)
	data, _ := json.Marshal(Presence{Signal: "presence", Viewers: h.merged(sessionID)})
	var subs []*Sub
	if string(data) != string(p.last) {
		p.last = data
		for s := range h.subsOf(sessionID) {
			subs = append(subs, s)
		}
	} else {
		// Unchanged: only a new subscriber (still subscribed) learns it.
		for _, s := range p.joined {
			if _, ok := h.subsOf(sessionID)[s]; ok {
				subs = append(subs, s)
			}
		}
	}
	p.joined = nil
	if len(local) == 0 && len(p.remote) == 0 && len(h.subsOf(sessionID)) == 0 {
		delete(h.sessions, sessionID) // nobody here, nobody elsewhere: forget it
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.send(data)
	}
	if publish && h.conn != nil {
		b, _ := json.Marshal(share{Node: h.node, Session: sessionID, Viewers: local})
		if err := h.conn.Publish(PresenceSubject, b); err != nil {
			h.log.Warn("publish presence", "session_id", sessionID, "err", err)
		}
	}
}

// heardShare takes another node's share of a session's presence.
func (h *Hub) heardShare(data []byte) {
	var s share
	if err := json.Unmarshal(data, &s); err != nil || s.Node == h.node || s.Session == "" {
		return
	}
	h.mu.Lock()
	p := h.sessions[s.Session]
	if p == nil && len(s.Viewers) == 0 {
		h.mu.Unlock()
		return
	}
	p = h.presence(s.Session)
	if len(s.Viewers) == 0 {
		delete(p.remote, s.Node)
	} else {
		p.remote[s.Node] = remoteShare{viewers: s.Viewers, heard: h.now()}
	}
	h.mu.Unlock()
	h.flushPresence(s.Session, false)
}

// heartbeat republishes this node's shares and lets lapsed typing and
// silent nodes go, every PresenceHeartbeat until stop closes.
func (h *Hub) heartbeat(stop <-chan struct{}) {
	t := time.NewTicker(PresenceHeartbeat)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		ids := make([]string, 0, len(h.sessions))
		for id := range h.sessions {
			ids = append(ids, id)
		}
		h.mu.Unlock()
		for _, id := range ids {
			h.flushPresence(id, true)
		}
	}
}
