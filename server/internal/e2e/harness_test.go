package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/agentsync/agentsync/server/auth"
	"github.com/agentsync/agentsync/server/internal/api"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// serverOpts configure one test server.
type serverOpts struct {
	Speed      model.Speed
	QueueLimit int
	QueueBytes int
	FoldBytes  int
	Token      string
	Origins    []string
	DBPath     string // default: a new file in t.TempDir()
	// PingInterval and WriteTimeout of subscriptions (0: the defaults).
	PingInterval time.Duration
	WriteTimeout time.Duration
	// WriteInterval, if set, paces every hub's deliveries to it
	// (fanout.NewPacer; none by default).
	WriteInterval time.Duration
	// SendBuffer, if set, is the SO_SNDBUF of every accepted connection:
	// small, it keeps a stalled client's frames out of kernel buffers.
	SendBuffer int
	// Authorizer replaces the shared Token (per-user access).
	Authorizer auth.Authorizer
	// Logger, if set, is the server's logger (default: testLogger).
	Logger *slog.Logger
	// Manager tunes the session manager beyond the fields above.
	Manager func(*session.Config)
}

// testServer is a real server: SQLite file, session manager, API handler
// on a loopback listener.
type testServer struct {
	t     testing.TB
	URL   string
	Store *sqlite.Store
	Mgr   *session.Manager
	srv   *httptest.Server
	token string
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("E2E_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newServer(t testing.TB, o serverOpts) *testServer {
	t.Helper()
	ctx := context.Background()
	path := o.DBPath
	if path == "" {
		path = filepath.Join(t.TempDir(), "e2e.db")
	}
	st, err := sqlite.Open(ctx, path, sqlite.Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	log := o.Logger
	if log == nil {
		log = testLogger(t)
	}
	cfg := session.Config{Store: st, Logger: log, QueueLimit: o.QueueLimit, QueueBytes: o.QueueBytes, FoldBytes: o.FoldBytes, Speed: o.Speed}
	if o.WriteInterval != 0 {
		cfg.Pacer = fanout.NewPacer(o.WriteInterval)
	}
	if o.Manager != nil {
		o.Manager(&cfg)
	}
	mgr, err := session.NewManager(ctx, cfg)
	if err != nil {
		st.Close()
		t.Fatalf("new manager: %v", err)
	}
	srv := httptest.NewUnstartedServer(api.New(api.Config{
		Manager: mgr, Logger: log, Token: o.Token, Authorizer: o.Authorizer, AllowedOrigins: o.Origins,
		PingInterval: o.PingInterval, WriteTimeout: o.WriteTimeout,
	}))
	if o.SendBuffer > 0 {
		srv.Listener = smallSendBuffers{Listener: srv.Listener, size: o.SendBuffer}
	}
	srv.Start()
	ts := &testServer{t: t, URL: srv.URL, Store: st, Mgr: mgr, srv: srv, token: o.Token}
	t.Cleanup(ts.close)
	return ts
}

// as returns a view of the server whose requests and subscriptions carry
// token as their bearer token.
func (s *testServer) as(token string) *testServer {
	c := *s
	c.token = token
	return &c
}

// with returns a view of the server whose helpers report to t (a fuzz
// target or subtest must not use its parent's T).
func (s *testServer) with(t testing.TB) *testServer {
	c := *s
	c.t = t
	return &c
}

func (s *testServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Mgr.Shutdown(ctx); err != nil {
		s.t.Errorf("manager shutdown: %v", err)
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	if err := s.Store.Close(); err != nil {
		s.t.Errorf("store close: %v", err)
	}
}

// response is one HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends one request. body is JSON-encoded unless it is []byte or
// string (sent as is); hdr are extra headers ("Name: value").
func (s *testServer) do(method, path string, body any, hdr ...string) response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatalf("marshal body: %v", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	for _, h := range hdr {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// decode reads the body as msgpack or JSON per its Content-Type.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	var err error
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/msgpack") {
		err = msgpack.Unmarshal(r.Body, v)
	} else {
		err = json.Unmarshal(r.Body, v)
	}
	if err != nil {
		t.Fatalf("decode %T from %q: %v", v, truncate(r.Body), err)
	}
}

// expect fails unless the status is want, and decodes the body into v.
func (r response) expect(t testing.TB, want int, v any) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body %s", r.Status, want, truncate(r.Body))
	}
	if v != nil {
		r.decode(t, v)
	}
}

// expectError checks a typed error answer.
func (r response) expectError(t testing.TB, status int, code string) synccore.Error {
	t.Helper()
	var e synccore.Error
	r.expect(t, status, &e)
	if e.Code != code {
		t.Fatalf("error code %q, want %q (message %q)", e.Code, code, e.Message)
	}
	if e.Message == "" {
		t.Fatalf("error %q has no message", code)
	}
	return e
}

func truncate(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

type sessionBody struct {
	SessionID    string `json:"session_id" msgpack:"session_id"`
	Model        string `json:"model" msgpack:"model"`
	CreatedAt    int64  `json:"created_at" msgpack:"created_at"`
	HeadSequence int64  `json:"head_sequence" msgpack:"head_sequence"`
	Title        string `json:"title" msgpack:"title"`
}

func (s *testServer) createSession() string {
	s.t.Helper()
	var sess sessionBody
	s.do("POST", "/v1/sessions", map[string]any{}).expect(s.t, http.StatusCreated, &sess)
	if sess.SessionID == "" {
		s.t.Fatal("created session has no id")
	}
	return sess.SessionID
}

func textParts(text string) map[string]any {
	return map[string]any{"parts": []map[string]any{{"type": "text", "text": text}}}
}

// say posts one user text message and returns it.
func (s *testServer) say(sid, text string) synccore.Message {
	s.t.Helper()
	var m synccore.Message
	s.do("POST", "/v1/sessions/"+sid+"/messages", textParts(text)).expect(s.t, http.StatusCreated, &m)
	return m
}

// page reads one page over HTTP msgpack (the clients' encoding).
func (s *testServer) page(sid, query string) synccore.MessagePage {
	s.t.Helper()
	var p synccore.MessagePage
	s.do("GET", "/v1/sessions/"+sid+"/messages?"+query, nil, "Accept: application/msgpack").expect(s.t, http.StatusOK, &p)
	return p
}

// all reads the whole session (include_internal as given), oldest first,
// by walking pages backwards as a client would.
func (s *testServer) all(sid string, includeInternal bool) []synccore.Message {
	s.t.Helper()
	q := fmt.Sprintf("limit=200&include_internal=%v", includeInternal)
	var out []synccore.Message
	p := s.page(sid, q)
	for {
		out = append(append([]synccore.Message{}, p.Items...), out...)
		if !p.HasMore {
			return out
		}
		p = s.page(sid, fmt.Sprintf("%s&before_sequence=%d", q, p.NextBeforeSequence))
	}
}

// waitFor polls the session until cond holds on its whole history.
func (s *testServer) waitFor(sid string, timeout time.Duration, what string, cond func([]synccore.Message) bool) []synccore.Message {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs := s.all(sid, true)
		if cond(msgs) {
			return msgs
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %s waiting for %s; history: %s", timeout, what, summary(msgs))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitIdle waits until the session has at least n messages and none is
// streaming.
func (s *testServer) waitIdle(sid string, n int) []synccore.Message {
	s.t.Helper()
	return s.waitFor(sid, 30*time.Second, fmt.Sprintf("%d messages, none streaming", n), func(msgs []synccore.Message) bool {
		return len(msgs) >= n && noneStreaming(msgs)
	})
}

func noneStreaming(msgs []synccore.Message) bool {
	for _, m := range msgs {
		if m.State == synccore.MessageStreaming {
			return false
		}
	}
	return true
}

// summary is a one-line-per-message description for failure messages.
func summary(msgs []synccore.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "\n  #%d %s %s rev=%d %s parts:", m.Sequence, m.Role, m.State, m.Revision, m.Visibility)
		for _, p := range m.Parts {
			fmt.Fprintf(&b, " %s", p.Type)
			if p.State != "" {
				fmt.Fprintf(&b, "(%s)", p.State)
			}
			if p.Status != "" {
				fmt.Fprintf(&b, "(%s)", p.Status)
			}
			if p.Type == synccore.PartError {
				fmt.Fprintf(&b, "[%s]", p.Code)
			}
		}
	}
	return b.String()
}

// wsURL is the subscribe URL of a session.
func (s *testServer) wsURL(sid string) string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/v1/sessions/" + sid + "/subscribe"
}

// subscribe opens a real WebSocket subscription.
func (s *testServer) subscribe(sid string) *wsClient {
	s.t.Helper()
	h := http.Header{}
	if s.token != "" {
		h.Set("Authorization", "Bearer "+s.token)
	}
	c, resp, err := websocket.DefaultDialer.Dial(s.wsURL(sid), h)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		s.t.Fatalf("subscribe %s: %v (status %d)", sid, err, status)
	}
	w := &wsClient{t: s.t, c: c}
	s.t.Cleanup(func() { c.Close() })
	return w
}

// wsClient reads frames from a subscription and checks their numbering.
type wsClient struct {
	t       testing.TB
	c       *websocket.Conn
	lastSeq uint64
}

// read reads one WebSocket message: a msgpack array of frames. It fails
// the test on a gap in seq.
func (w *wsClient) read(timeout time.Duration) ([]synccore.Frame, error) {
	w.t.Helper()
	_ = w.c.SetReadDeadline(time.Now().Add(timeout))
	typ, data, err := w.c.ReadMessage()
	if err != nil {
		return nil, err
	}
	if typ != websocket.BinaryMessage {
		w.t.Fatalf("message type %d, want binary", typ)
	}
	frames := decodeFrames(w.t, data)
	for _, f := range frames {
		if f.Seq != w.lastSeq+1 {
			w.t.Fatalf("frame seq %d after %d: gap", f.Seq, w.lastSeq)
		}
		w.lastSeq = f.Seq
	}
	return frames, nil
}

// decodeFrames decodes one WebSocket message of a subscription.
func decodeFrames(t testing.TB, data []byte) []synccore.Frame {
	var frames []synccore.Frame
	if err := msgpack.Unmarshal(data, &frames); err != nil || len(frames) == 0 {
		t.Errorf("decode frames (%d bytes): %v", len(data), err)
	}
	return frames
}

// smallSendBuffers sets SO_SNDBUF on every accepted connection.
type smallSendBuffers struct {
	net.Listener
	size int
}

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(l.size)
	}
	return c, err
}
