package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// netHost runs a synccore.Client against the real server: it carries out
// the client's commands with real WebSockets, HTTP msgpack pages and
// timers, on the test goroutine (the client is not concurrent).
type netHost struct {
	t      testing.TB
	s      *testServer
	c      *synccore.Client
	events chan hostEvent
	conn   *websocket.Conn
	gen    int // generation of the current connection; older ones' events are dropped
	opened int // subscriptions opened
	resync int // resync frames received
}

type hostEvent struct {
	ev  synccore.Event
	gen int
}

func newNetHost(t testing.TB, s *testServer, sid string, pageLimit int) *netHost {
	h := &netHost{t: t, s: s, c: synccore.NewClient(synccore.Options{}), events: make(chan hostEvent, 1<<16)}
	t.Cleanup(func() {
		if h.conn != nil {
			h.conn.Close()
		}
	})
	h.handle(synccore.Event{Type: synccore.EvStart, SessionID: sid, PageLimit: pageLimit})
	return h
}

func (h *netHost) handle(ev synccore.Event) {
	h.t.Helper()
	cmds, err := h.c.Handle(ev)
	if err != nil && cmds == nil {
		h.t.Fatalf("client rejected %s: %v", ev.Type, err)
	}
	for _, cmd := range cmds {
		switch cmd.Type {
		case synccore.CmdOpenSubscription:
			h.open(cmd.SessionID)
		case synccore.CmdCloseSubscription:
			h.closeConn()
		case synccore.CmdFetchPage:
			h.fetch(cmd)
		case synccore.CmdSetTimer:
			// Timers belong to the client, not to a connection: gen -1
			// is always delivered.
			id := cmd.TimerID
			time.AfterFunc(time.Duration(cmd.DelayMs)*time.Millisecond, func() {
				h.events <- hostEvent{ev: synccore.Event{Type: synccore.EvTimerFired, TimerID: id}, gen: -1}
			})
		}
	}
}

func (h *netHost) open(sid string) {
	h.t.Helper()
	h.closeConn()
	c, _, err := websocket.DefaultDialer.Dial(h.s.wsURL(sid), nil)
	if err != nil {
		h.gen++
		h.handle(synccore.Event{Type: synccore.EvConnectionLost, Error: err.Error(), Jitter: 500})
		return
	}
	h.gen++
	h.conn = c
	h.opened++
	gen := h.gen
	go func() {
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				h.events <- hostEvent{ev: synccore.Event{Type: synccore.EvConnectionLost, Error: err.Error(), Jitter: 500}, gen: gen}
				return
			}
			h.events <- hostEvent{ev: synccore.Event{Type: synccore.EvFrames, Data: data}, gen: gen}
		}
	}()
	h.handle(synccore.Event{Type: synccore.EvSubscriptionOpened})
}

func (h *netHost) closeConn() {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
		h.gen++ // the old reader's connection_lost is not news to the client
	}
}

func (h *netHost) fetch(cmd synccore.Command) {
	h.t.Helper()
	q := url.Values{}
	q.Set("limit", fmt.Sprint(cmd.Limit))
	if cmd.BeforeSequence > 0 {
		q.Set("before_sequence", fmt.Sprint(cmd.BeforeSequence))
	}
	q.Set("include_internal", fmt.Sprint(cmd.IncludeInternal))
	req, _ := http.NewRequest("GET", h.s.URL+"/v1/sessions/"+cmd.SessionID+"/messages?"+q.Encode(), nil)
	req.Header.Set("Accept", "application/msgpack")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.handle(synccore.Event{Type: synccore.EvPageFailed, RequestID: cmd.RequestID, Error: err.Error()})
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		h.handle(synccore.Event{Type: synccore.EvPageFailed, RequestID: cmd.RequestID, Error: fmt.Sprintf("%d %v %s", resp.StatusCode, err, body)})
		return
	}
	h.handle(synccore.Event{Type: synccore.EvPage, RequestID: cmd.RequestID, Data: body})
}

// pump handles queued events for up to d.
func (h *netHost) pump(d time.Duration) {
	h.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case he := <-h.events:
			if he.gen >= 0 && he.gen != h.gen {
				continue // from a connection already closed
			}
			if he.ev.Type == synccore.EvConnectionLost {
				h.conn = nil
			}
			if he.ev.Type == synccore.EvFrames && strings.Contains(string(he.ev.Data), synccore.FrameResync) {
				h.resync++
			}
			h.handle(he.ev)
		case <-timer.C:
			return
		}
	}
}

// converge pumps until the client is live and its digest equals the
// server's snapshot digest of the same window, with the turn over.
func (h *netHost) converge(sid string, timeout time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		h.pump(20 * time.Millisecond)
		view := h.c.View()
		if view.Status == synccore.StatusLive && len(view.Messages) > 0 && noneStreaming(view.Messages) {
			// Right after a post the client and the store may both hold
			// just the user message, done: wait for the turn to end (a
			// post starts its turn before it answers).
			if h.s.Mgr.Running() == 0 && h.converged(sid, view) {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("client did not converge in %s: status %s, %d messages in view: %s",
				timeout, view.Status, len(view.Messages), summary(view.Messages))
		}
	}
}

// converged reports whether the client's digest is the store's of the
// window the client's view holds, with nothing streaming.
func (h *netHost) converged(sid string, view synccore.View) bool {
	all := h.s.all(sid, false)
	if !noneStreaming(all) {
		return false
	}
	first := view.Messages[0].Sequence
	var window []synccore.Message
	for _, m := range all {
		if m.Sequence >= first {
			window = append(window, m)
		}
	}
	return h.c.Digest() == wire.DigestMessages(window)
}

// loadAll asks for older pages until the view holds the whole history.
func (h *netHost) loadAll() {
	h.t.Helper()
	for i := 0; h.c.View().HasMoreOlder; i++ {
		if i > 100 {
			h.t.Fatal("load_older does not reach the start of the history")
		}
		h.handle(synccore.Event{Type: synccore.EvLoadOlder})
		h.pump(50 * time.Millisecond)
	}
}

// TestClientConverges: a synccore.Client fed from a real WebSocket and
// HTTP pages ends with exactly the server's snapshot (same digest as
// Manager.Digest), joining mid-stream, across a dropped connection, and
// with history longer than one page.
func TestClientConverges(t *testing.T) {
	s := newServer(t, serverOpts{Speed: model.Paced(200 * time.Microsecond)})
	sid := s.createSession()
	s.exchange(sid, 30) // 60 messages: more than one page
	s.say(sid, "scenario:reasoning chars=3000 delta=4")

	h := newNetHost(t, s, sid, 50)
	h.pump(200 * time.Millisecond) // joins mid-stream
	if st := h.c.View().Status; st != synccore.StatusLive {
		t.Fatalf("client status %s after joining", st)
	}
	h.converge(sid, 60*time.Second)
	h.loadAll()
	want, err := s.Mgr.Digest(t.Context(), sid, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.c.Digest(); got != want {
		t.Fatalf("client digest %s, Manager.Digest %s", got, want)
	}
	if v := h.c.View(); int64(len(v.Messages)) != v.Total || v.Total != 62 {
		t.Fatalf("view holds %d of total %d", len(v.Messages), v.Total)
	}

	// Drop the connection in the middle of the next answer; the client
	// reconnects on its own and ends with the same snapshot.
	s.say(sid, "scenario:tools city=Rome")
	s.say(sid, "scenario:text chars=3000 delta=3")
	h.pump(100 * time.Millisecond)
	opened := h.opened
	if h.conn == nil {
		t.Fatal("no connection to drop")
	}
	h.conn.UnderlyingConn().Close()
	h.converge(sid, 60*time.Second)
	if h.opened <= opened {
		t.Fatal("the client never reconnected")
	}
	want, _ = s.Mgr.Digest(t.Context(), sid, false)
	if got := h.c.Digest(); got != want {
		t.Fatalf("after reconnect: client digest %s, Manager.Digest %s", got, want)
	}
}

// TestClientSurvivesResyncs: with a tiny subscriber queue and a model at
// full speed, the client is resynced again and again while the answer
// streams, yet converges on the snapshot once it ends.
func TestClientSurvivesResyncs(t *testing.T) {
	s := newServer(t, serverOpts{QueueLimit: 8, QueueBytes: 2048})
	sid := s.createSession()
	h := newNetHost(t, s, sid, 50)
	h.pump(50 * time.Millisecond)
	s.say(sid, "scenario:long chars=60000 delta=2")
	h.converge(sid, 90*time.Second)
	want, _ := s.Mgr.Digest(t.Context(), sid, false)
	if h.c.Digest() != want {
		t.Fatal("client digest differs from Manager.Digest")
	}
	t.Logf("resync frames: %d, subscriptions opened: %d", h.resync, h.opened)
	if h.resync == 0 {
		t.Fatal("the tiny queue never resynced the client: the test proves nothing")
	}
}
