package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// byHeader is a test authorizer: the principal is the X-User header.
var byHeader = auth.Func(func(r *http.Request, _ string) (string, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return u, nil
	}
	return "", auth.ErrUnauthorized
})

// live is a server.Server on a loopback listener over a SQLite file.
type live struct {
	t     *testing.T
	srv   *server.Server
	http  *httptest.Server
	store *sqlite.Store
	db    string
}

// start serves cfg (its Store is opened on db, a new file if "") on
// loopback; the test's cleanup closes it unless the test did.
func start(t *testing.T, db string, cfg server.Config) *live {
	t.Helper()
	if db == "" {
		db = filepath.Join(t.TempDir(), "agent.db")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	cfg.Store = st
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	l := &live{t: t, srv: srv, http: httptest.NewServer(srv), store: st, db: db}
	t.Cleanup(l.stop)
	return l
}

// stop closes the server, then the listener, then the store; it is
// idempotent.
func (l *live) stop() {
	if l.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.srv.Close(ctx); err != nil {
		l.t.Errorf("server close: %v", err)
	}
	l.http.CloseClientConnections()
	l.http.Close()
	if err := l.store.Close(); err != nil {
		l.t.Errorf("store close: %v", err)
	}
	l.store = nil
}

// answer is one HTTP response, its typed error decoded when it has one.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    synccore.Error
}

// call sends a JSON request as user ("" = no X-User header) through
// client (nil = the default one).
func (l *live) call(client *http.Client, user, method, path, body string) answer {
	l.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, l.http.URL+path, rd)
	if err != nil {
		l.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.Header.Set("X-User", user)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		l.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if a.body, err = io.ReadAll(resp.Body); err != nil {
		l.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if a.status >= 400 {
		if err := json.Unmarshal(a.body, &a.err); err != nil {
			l.t.Fatalf("%s %s: %d with an untyped body %q", method, path, a.status, a.body)
		}
	}
	return a
}

// createSession creates a session of user and returns its id.
func (l *live) createSession(user string) string {
	l.t.Helper()
	a := l.call(nil, user, "POST", "/v1/sessions", "{}")
	var s struct {
		SessionID string `json:"session_id"`
	}
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &s) != nil || s.SessionID == "" {
		l.t.Fatalf("create session: %d %s", a.status, a.body)
	}
	return s.SessionID
}

// subscribe opens a WebSocket subscription as user; on a refused upgrade
// it returns nil and the typed answer.
func (l *live) subscribe(user, sessionID string) (*websocket.Conn, answer) {
	l.t.Helper()
	url := "ws" + strings.TrimPrefix(l.http.URL, "http") + "/v1/sessions/" + sessionID + "/subscribe"
	c, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"X-User": {user}})
	if err == nil {
		l.t.Cleanup(func() { _ = c.Close() })
		return c, answer{status: resp.StatusCode}
	}
	if resp == nil {
		l.t.Fatalf("subscribe %s: %v", sessionID, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	a.body, _ = io.ReadAll(resp.Body)
	if jerr := json.Unmarshal(a.body, &a.err); jerr != nil {
		l.t.Fatalf("subscribe %s: %d with an untyped body %q", sessionID, a.status, a.body)
	}
	return nil, a
}

// readFrames reads one WebSocket message of frames.
func readFrames(c *websocket.Conn, timeout time.Duration) ([]synccore.Frame, error) {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	_, data, err := c.ReadMessage()
	if err != nil {
		return nil, err
	}
	return wire.DecodeFrames(data)
}

// fromIP is an HTTP client whose connections leave from the loopback
// address ip (any of 127.0.0.0/8 on Linux), so a test can act as several
// client machines.
func fromIP(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}
