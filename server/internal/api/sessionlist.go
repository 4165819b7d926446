package api

import (
	"context"
	"encoding/json"
	"time"

	"net/http"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server/internal/signals"
	"github.com/agentsync/agentsync/synccore"
)

// sessionListMsg is one text message of GET /v1/sessions/subscribe
// (docs/protocol.md, "Session list").
type sessionListMsg struct {
	Kind      string        `json:"kind"` // "sessions", "upsert", "delete"
	Items     []sessionBody `json:"items,omitempty"`
	Session   *sessionBody  `json:"session,omitempty"`
	SessionID string        `json:"session_id,omitempty"`
}

// subscribeSessions upgrades GET /v1/sessions/subscribe: the caller's
// whole list first, then each change. State-based: a client that
// reconnects reads the whole list again.
func (a *api) subscribeSessions(w http.ResponseWriter, r *http.Request) {
	if a.lists == nil {
		a.writeError(w, r, synccore.Errorf(synccore.CodeNotFound, "no live session lists on this server"))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	who := principal(ctx)
	sub := a.lists.Subscribe(who) // before the read: no change is missed
	defer sub.Close()
	list, err := a.mgr.ListOwnedSessions(ctx, who, 0)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	first := sessionListMsg{Kind: "sessions", Items: make([]sessionBody, 0, len(list))}
	for _, s := range list {
		b := a.withCapabilities(toSessionBody(s))
		b.Running = a.lists.Running(s.SessionID)
		first.Items = append(first.Items, b)
	}
	conn, err := a.upgrader.Upgrade(w, r)
	if err != nil {
		return
	}
	defer conn.Close()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		_ = conn.ReadControl(a.pongWait)
		cancel()
		_ = conn.Close()
	}()
	defer func() { _ = conn.Close(); <-readerDone }()
	write := func(m any) bool {
		data, _ := json.Marshal(m)
		return conn.WriteText(data, time.Now().Add(a.writeTimeout)) == nil
	}
	// The whole list, even empty: "items" is never left out of it.
	if !write(struct {
		Kind  string        `json:"kind"`
		Items []sessionBody `json:"items"`
	}{first.Kind, first.Items}) {
		return
	}
	ping := time.NewTicker(a.pingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.Done():
			a.closeHandshake(conn, readerDone, websocket.CloseGoingAway, "server stopping")
			return
		case <-sub.Lagged:
			// Too far behind: the client reconnects and reads the list again.
			a.closeHandshake(conn, readerDone, websocket.CloseTryAgainLater, "session list lagged")
			return
		case <-ping.C:
			if conn.Ping(time.Now().Add(a.writeTimeout)) != nil {
				return
			}
		case ev := <-sub.C:
			if !write(a.listMsg(ev)) {
				return
			}
		}
	}
}

func (a *api) listMsg(ev signals.ListEvent) sessionListMsg {
	if ev.Deleted {
		return sessionListMsg{Kind: "delete", SessionID: ev.SessionID}
	}
	b := a.withCapabilities(toSessionBody(ev.Session))
	b.Running = ev.Running
	return sessionListMsg{Kind: "upsert", Session: &b}
}
