package bindings

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agentsync/agentsync/synccore"
	"github.com/gorilla/websocket"
)

// sessionListMsg is one text message of GET /v1/sessions/subscribe
// (docs/protocol.md §4.7).
type sessionListMsg struct {
	Kind      string    `json:"kind"` // "sessions", "upsert", "delete"
	Items     []Session `json:"items"`
	Session   *Session  `json:"session"`
	SessionID string    `json:"session_id"`
}

// The session list's reconnect backoff (§6.4's): 250 ms doubling to 8 s,
// each wait drawn in its upper half so clients of a restarted node spread.
const (
	listBackoffMin = 250 * time.Millisecond
	listBackoffMax = 8 * time.Second
)

// WatchSessions follows the principal's session list live (GET
// /v1/sessions/subscribe, docs/protocol.md §4.7): onList gets the whole
// list, newest activity first, once it is read and again after every
// change made anywhere (another device, the JS host, another node): a
// session created, renamed, forked or deleted, a turn started or ended
// (Session.Running). The list is state-based: after a lost connection
// WatchSessions reconnects by itself with backoff and hands onList the
// whole list again.
//
// It blocks until ctx is done, returning ctx.Err(), or until the server
// refuses the subscription for good: unauthorized or forbidden (after the
// TokenSource had its chance), not_found for a server without live lists.
// onList is called on WatchSessions's goroutine, one call at a time; the
// slice is the callback's to keep.
func (a *API) WatchSessions(ctx context.Context, onList func([]Session)) error {
	base, err := websocketBase(a.BaseURL)
	if err != nil {
		return err
	}
	u := base.JoinPath("/v1/sessions/subscribe").String()
	for failures := 0; ; failures++ {
		read, err := a.followSessionList(ctx, u, onList)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if refusedForGood(err) {
			return err
		}
		if read {
			failures = 0 // a good list starts the backoff over
		}
		wait := min(listBackoffMax, listBackoffMin<<min(failures, 6))
		wait = wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// refusedForGood reports whether a refused subscription will be refused again.
func refusedForGood(err error) bool {
	return errors.Is(err, synccore.ErrUnauthorized) || errors.Is(err, synccore.ErrForbidden) ||
		errors.Is(err, synccore.ErrNotFound) || errors.Is(err, synccore.ErrBadRequest)
}

// followSessionList runs one connection of WatchSessions until it ends;
// read reports whether the whole list arrived on it.
func (a *API) followSessionList(ctx context.Context, u string, onList func([]Session)) (read bool, err error) {
	conn, err := a.dialWS(ctx, nil, u)
	if err != nil {
		return false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	keepAlive(conn)
	byID := map[string]Session{}
	for {
		typ, data, err := conn.ReadMessage()
		if err != nil {
			return read, fmt.Errorf("bindings: session list: %w", err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(readTimeout))
		var m sessionListMsg
		if typ != websocket.TextMessage || json.Unmarshal(data, &m) != nil {
			continue // not ours to read: a newer server may send more
		}
		switch {
		case m.Kind == "sessions":
			clear(byID)
			for _, s := range m.Items {
				byID[s.SessionID] = s
			}
			read = true
		case !read:
			continue // a change before the list: the list holds it
		case m.Kind == "upsert" && m.Session != nil && m.Session.SessionID != "":
			byID[m.Session.SessionID] = *m.Session
		case m.Kind == "delete":
			if _, ok := byID[m.SessionID]; !ok {
				continue
			}
			delete(byID, m.SessionID)
		default:
			continue
		}
		onList(sortedSessions(byID))
	}
}

// sortedSessions is the list newest activity first, ties by id, as the
// JS host orders it.
func sortedSessions(byID map[string]Session) []Session {
	list := make([]Session, 0, len(byID))
	for _, s := range byID {
		list = append(list, s)
	}
	slices.SortFunc(list, func(x, y Session) int {
		return cmp.Or(cmp.Compare(y.UpdatedAt, x.UpdatedAt), cmp.Compare(x.SessionID, y.SessionID))
	})
	return list
}
