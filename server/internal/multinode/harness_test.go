// Package multinode tests several server nodes (server.New with
// Config.Cluster) on one throwaway PostgreSQL database, over loopback HTTP
// and WebSockets.
package multinode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/pgtest"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/postgres"
	"github.com/agentsync/agentsync/synccore"
)

var pg *pgtest.Cluster

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &pg)) }

// stallable is a node's store that can freeze the node's lease keeping:
// once stalled, renewals hang (as in a process paused by the OS or a long
// GC) and releases do nothing (a killed node releases nothing), while the
// node's other work goes on, so its late commits meet the database's
// fencing.
type stallable struct {
	store.Store
	stalled atomic.Bool
}

func (s *stallable) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if s.stalled.Load() {
		<-ctx.Done()
		return store.Lease{}, ctx.Err()
	}
	return s.Store.RenewLease(ctx, l, ttl)
}

// Orphaned finds nothing while stalled: a paused node sweeps nothing.
func (s *stallable) Orphaned(ctx context.Context, limit int) ([]string, error) {
	if s.stalled.Load() {
		return nil, nil
	}
	return s.Store.Orphaned(ctx, limit)
}

func (s *stallable) ReleaseLease(ctx context.Context, l store.Lease) error {
	if s.stalled.Load() {
		return nil
	}
	return s.Store.ReleaseLease(ctx, l)
}

// node is one server node on loopback: its own connection pool to the
// shared database.
type node struct {
	t     testing.TB
	name  string
	srv   *server.Server
	http  *httptest.Server
	store *stallable
	nats  *nats.Conn // nil without NATS
}

func logger() *slog.Logger {
	if os.Getenv("E2E_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// startNode starts a node named name with lease TTL ttl; tune, if set,
// adjusts the rest of its config.
func startNode(t testing.TB, dbURL, name string, ttl time.Duration, tune func(*server.Config)) *node {
	t.Helper()
	ctx := context.Background()
	pgs, err := postgres.Open(ctx, dbURL, postgres.Options{Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	st := &stallable{Store: pgs}
	cfg := server.Config{
		Store: st, Logger: logger().With("node", name),
		Cluster: &server.Cluster{Node: name, LeaseTTL: ttl},
		Limits:  server.Limits{RequestsPerSecond: -1},
	}
	if tune != nil {
		tune(&cfg)
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		pgs.Close()
		t.Fatal(err)
	}
	n := &node{t: t, name: name, srv: srv, http: httptest.NewServer(srv), store: st}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("node %s: close: %v", name, err)
		}
		n.http.CloseClientConnections()
		n.http.Close()
		pgs.Close()
	})
	return n
}

// answer is one HTTP response, its typed error decoded when it has one.
type answer struct {
	status int
	body   []byte
	err    synccore.Error
}

func (n *node) call(method, path, body string) answer {
	n.t.Helper()
	req, err := http.NewRequest(method, n.http.URL+path, strings.NewReader(body))
	if err != nil {
		n.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("node %s: %s %s: %v", n.name, method, path, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	a.body, _ = io.ReadAll(resp.Body)
	if a.status >= 400 {
		if err := json.Unmarshal(a.body, &a.err); err != nil {
			n.t.Fatalf("node %s: %s %s: %d with an untyped body %q", n.name, method, path, a.status, a.body)
		}
	}
	return a
}

func (n *node) createSession() string {
	n.t.Helper()
	a := n.call("POST", "/v1/sessions", "{}")
	var s struct {
		SessionID string `json:"session_id"`
	}
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &s) != nil {
		n.t.Fatalf("create session: %d %s", a.status, a.body)
	}
	return s.SessionID
}

func (n *node) post(sid, text string) answer {
	n.t.Helper()
	body, _ := json.Marshal(map[string]any{"parts": []map[string]string{{"type": "text", "text": text}}})
	return n.call("POST", "/v1/sessions/"+sid+"/messages", string(body))
}

func (n *node) history(sid string) []synccore.Message {
	n.t.Helper()
	a := n.call("GET", "/v1/sessions/"+sid+"/messages?limit=200&include_internal=true", "")
	var p synccore.MessagePage
	if a.status != http.StatusOK || json.Unmarshal(a.body, &p) != nil {
		n.t.Fatalf("history: %d %s", a.status, a.body)
	}
	return p.Items
}

func (n *node) wsURL(sid string) string {
	return "ws" + strings.TrimPrefix(n.http.URL, "http") + "/v1/sessions/" + sid + "/subscribe"
}

// subscribe opens a WebSocket subscription; a refused upgrade returns nil
// and the typed answer.
func (n *node) subscribe(sid string) (*websocket.Conn, answer) {
	n.t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(n.wsURL(sid), nil)
	if err == nil {
		n.t.Cleanup(func() { _ = c.Close() })
		return c, answer{status: resp.StatusCode}
	}
	if resp == nil {
		n.t.Fatalf("subscribe %s: %v", sid, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode}
	a.body, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(a.body, &a.err)
	return nil, a
}

// postUntilServed posts text on n until n serves the session (201),
// while another node's lease on it lapses: the time it took after since.
// The bound: the old owner's last renewal was at most TTL/3 before since,
// its lease lasts TTL from then; the rest is room for a loaded machine.
func postUntilServed(t *testing.T, n *node, sid, text string, since time.Time, ttl time.Duration) time.Duration {
	t.Helper()
	for {
		r := n.post(sid, text)
		if r.status == http.StatusCreated {
			return time.Since(since)
		}
		if r.status != http.StatusConflict {
			t.Fatalf("post on %s during the takeover: %d %s", n.name, r.status, r.body)
		}
		if time.Since(since) > 5*ttl {
			t.Fatalf("%s did not take the session within %s: %+v", n.name, 5*ttl, r.err)
		}
		time.Sleep(ttl / 20)
	}
}

// follower runs a synccore.Client against one node: its subscription on a
// real WebSocket, its pages over HTTP msgpack, its timers real. Its
// events run on one goroutine at a time (converge, or run's).
type follower struct {
	n      *node
	c      *synccore.Client
	events chan connEvent
	conn   *websocket.Conn
	// breaks are the reasons the client found its stream broken (a gap
	// in seq, a delta at the wrong offset, a malformed frame): a server
	// must never cause one. A resync the server asked for, a lost
	// connection or a failed snapshot read are not breaks.
	breaks []string
	// backoffs counts every time the client backed off (resync, lost
	// connection, break).
	backoffs int
}

// connEvent is an event for the client; one that came from a connection
// (conn non-nil) is dropped once that connection is no longer the
// client's (it closed it, or it was cut).
type connEvent struct {
	ev   synccore.Event
	conn *websocket.Conn
}

func follow(n *node, sid string) *follower {
	f := &follower{n: n, c: synccore.NewClient(synccore.Options{}), events: make(chan connEvent, 1<<12)}
	n.t.Cleanup(func() {
		if f.conn != nil {
			f.conn.Close()
		}
	})
	f.handle(synccore.Event{Type: synccore.EvStart, SessionID: sid, PageLimit: 50})
	return f
}

func (f *follower) handle(ev synccore.Event) {
	t := f.n.t
	cmds, err := f.c.Handle(ev)
	if err != nil && cmds == nil {
		t.Errorf("client on node %s rejected %s: %v", f.n.name, ev.Type, err)
		return
	}
	for _, cmd := range cmds {
		switch cmd.Type {
		case synccore.CmdOpenSubscription:
			f.open(cmd.SessionID)
		case synccore.CmdCloseSubscription:
			f.dropConn()
		case synccore.CmdFetchPage:
			f.fetch(cmd)
		case synccore.CmdSetTimer:
			id := cmd.TimerID
			time.AfterFunc(time.Duration(cmd.DelayMs)*time.Millisecond, func() {
				f.events <- connEvent{ev: synccore.Event{Type: synccore.EvTimerFired, TimerID: id}}
			})
		case synccore.CmdStatus:
			if cmd.Status != synccore.StatusBackoff {
				continue
			}
			f.backoffs++
			if !benignBackoff(cmd.Reason) {
				f.breaks = append(f.breaks, cmd.Reason)
			}
		}
	}
}

// benignBackoff tells the reasons a client backs off for that are not a
// broken stream.
func benignBackoff(reason string) bool {
	for _, p := range []string{"server asked to resync:", "connection lost", "snapshot read failed:"} {
		if strings.HasPrefix(reason, p) {
			return true
		}
	}
	return false
}

func (f *follower) dropConn() {
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil
	}
}

// take handles one event unless it came from a connection the client no
// longer has.
func (f *follower) take(e connEvent) {
	if e.conn != nil && e.conn != f.conn {
		return
	}
	if e.ev.Type == synccore.EvConnectionLost {
		f.dropConn()
	}
	f.handle(e.ev)
}

// cut breaks the client's connection as a network failure would: the
// client sees it lost and reconnects.
func (f *follower) cut() {
	if f.conn != nil {
		_ = f.conn.UnderlyingConn().Close()
	}
}

func (f *follower) open(sid string) {
	c, _, err := websocket.DefaultDialer.Dial(f.n.wsURL(sid), nil)
	if err != nil {
		f.handle(synccore.Event{Type: synccore.EvConnectionLost, Error: err.Error(), Jitter: 500})
		return
	}
	f.conn = c
	go func() {
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				f.events <- connEvent{ev: synccore.Event{Type: synccore.EvConnectionLost, Error: err.Error(), Jitter: 500}, conn: c}
				return
			}
			f.events <- connEvent{ev: synccore.Event{Type: synccore.EvFrames, Data: data}, conn: c}
		}
	}()
	f.handle(synccore.Event{Type: synccore.EvSubscriptionOpened})
}

func (f *follower) fetch(cmd synccore.Command) {
	q := url.Values{}
	q.Set("limit", fmt.Sprint(cmd.Limit))
	if cmd.BeforeSequence > 0 {
		q.Set("before_sequence", fmt.Sprint(cmd.BeforeSequence))
	}
	q.Set("include_internal", fmt.Sprint(cmd.IncludeInternal))
	req, _ := http.NewRequest("GET", f.n.http.URL+"/v1/sessions/"+cmd.SessionID+"/messages?"+q.Encode(), nil)
	req.Header.Set("Accept", "application/msgpack")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.handle(synccore.Event{Type: synccore.EvPageFailed, RequestID: cmd.RequestID, Error: err.Error()})
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		f.handle(synccore.Event{Type: synccore.EvPageFailed, RequestID: cmd.RequestID, Error: fmt.Sprintf("%d %v %s", resp.StatusCode, err, body)})
		return
	}
	f.handle(synccore.Event{Type: synccore.EvPage, RequestID: cmd.RequestID, Data: body})
}

// converge handles the client's events until its digest is want and it is
// live, failing after timeout.
func (f *follower) converge(want string, timeout time.Duration) {
	t := f.n.t
	t.Helper()
	deadline := time.After(timeout)
	for {
		if v := f.c.View(); v.Status == synccore.StatusLive && f.c.Digest() == want {
			return
		}
		select {
		case e := <-f.events:
			f.take(e)
		case <-deadline:
			v := f.c.View()
			t.Fatalf("client on node %s did not converge in %s: status %s, %d messages, digest %s want %s",
				f.n.name, timeout, v.Status, len(v.Messages), f.c.Digest(), want)
		}
	}
}
