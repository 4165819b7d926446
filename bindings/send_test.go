package bindings

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// faultProxy stands between the API client and a real server. For each
// POST .../messages it records the attempt (its Idempotency-Key and when it
// came) and lets fault decide what happens to it: nil forwards it.
type faultProxy struct {
	target string
	fault  func(n int, w http.ResponseWriter, r *http.Request, forward func() (*http.Response, []byte)) bool

	mu    sync.Mutex
	keys  []string
	times []time.Time
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	forward := func() (*http.Response, []byte) {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return nil, nil
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, data
	}
	if r.Method == http.MethodPost && bytes.HasSuffix([]byte(r.URL.Path), []byte("/messages")) {
		p.mu.Lock()
		n := len(p.keys)
		p.keys = append(p.keys, r.Header.Get("Idempotency-Key"))
		p.times = append(p.times, time.Now())
		p.mu.Unlock()
		if p.fault != nil && p.fault(n, w, r, forward) {
			return
		}
	}
	resp, data := forward()
	if resp == nil {
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(data)
}

func (p *faultProxy) attempts() ([]string, []time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.keys...), append([]time.Time(nil), p.times...)
}

// newSendSession starts a real server with a new session: its URL, an API
// client that talks to it directly, and the session.
func newSendSession(t *testing.T) (*testServer, *API, Session) {
	t.Helper()
	srv := startServer(t, model.Speed{})
	direct := &API{BaseURL: srv.URL}
	sess, err := direct.CreateSession(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return srv, direct, sess
}

// userMessages are the session's user messages as the server holds them.
func userMessages(t *testing.T, api *API, sessionID string) []synccore.Message {
	t.Helper()
	page, err := api.Messages(context.Background(), sessionID, 200, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []synccore.Message
	for _, m := range page.Items {
		if m.Role == synccore.RoleUser {
			out = append(out, m)
		}
	}
	return out
}

// TestSendRetriesALostAnswerOnce: the server commits a post but its answer
// is lost (the connection drops). The host sends it again with the same
// Idempotency-Key and gets the message committed the first time; the
// session holds it once.
func TestSendRetriesALostAnswerOnce(t *testing.T) {
	srv, direct, sess := newSendSession(t)
	var committed synccore.Message
	proxy := &faultProxy{target: srv.URL}
	proxy.fault = func(n int, w http.ResponseWriter, r *http.Request, forward func() (*http.Response, []byte)) bool {
		if n > 0 {
			return false
		}
		resp, data := forward()
		if resp == nil || resp.StatusCode != http.StatusCreated {
			t.Errorf("first post: %v", resp)
			return false
		}
		if err := msgpack.Unmarshal(data, &committed); err != nil {
			t.Errorf("first post's answer: %v", err)
		}
		// The answer is lost: the connection closes without it.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return true
	}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	api := &API{BaseURL: ps.URL}
	m, err := api.Send(context.Background(), sess.SessionID, synccore.Part{Type: synccore.PartText, Text: "only once, please"})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	keys, _ := proxy.attempts()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("attempts' Idempotency-Keys %q: want two, the same, not empty", keys)
	}
	if committed.MessageID == "" || m.MessageID != committed.MessageID {
		t.Fatalf("send answered message %q, the server committed %q", m.MessageID, committed.MessageID)
	}
	users := userMessages(t, direct, sess.SessionID)
	if len(users) != 1 || users[0].MessageID != committed.MessageID {
		t.Fatalf("the session holds %d user messages (%+v), want the one committed", len(users), users)
	}
}

// TestSendWaitsForRetryAfter: a 429 with Retry-After: 1 is sent again no
// sooner than a second later, and then succeeds.
func TestSendWaitsForRetryAfter(t *testing.T) {
	srv, direct, sess := newSendSession(t)
	proxy := &faultProxy{target: srv.URL, fault: func(n int, w http.ResponseWriter, _ *http.Request, _ func() (*http.Response, []byte)) bool {
		if n > 0 {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"code":"rate_limited","message":"slow down"}`))
		return true
	}}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	if _, err := (&API{BaseURL: ps.URL}).Send(context.Background(), sess.SessionID, synccore.Part{Type: synccore.PartText, Text: "later"}); err != nil {
		t.Fatalf("send: %v", err)
	}
	keys, times := proxy.attempts()
	if len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("attempts' keys %q: want two, the same", keys)
	}
	if gap := times[1].Sub(times[0]); gap < 900*time.Millisecond {
		t.Fatalf("sent again after %v: Retry-After said 1 s", gap)
	}
	if n := len(userMessages(t, direct, sess.SessionID)); n != 1 {
		t.Fatalf("%d user messages, want 1", n)
	}
}

// TestSendDoesNotRetryWhatCannotSucceed: a 400 is the caller's at once;
// with Retries < 0 a 503 is too; a 503 whose Retry-After is past the cap
// is not waited for.
func TestSendDoesNotRetryWhatCannotSucceed(t *testing.T) {
	srv, _, sess := newSendSession(t)
	unavailable := func(retryAfter string) func(int, http.ResponseWriter, *http.Request, func() (*http.Response, []byte)) bool {
		return func(_ int, w http.ResponseWriter, _ *http.Request, _ func() (*http.Response, []byte)) bool {
			w.Header().Set("Content-Type", "application/json")
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"closed","message":"draining"}`))
			return true
		}
	}
	for _, c := range []struct {
		name  string
		fault func(int, http.ResponseWriter, *http.Request, func() (*http.Response, []byte)) bool
		parts []synccore.Part
		opts  SendOptions
		code  string
	}{
		{"400", nil, []synccore.Part{{Type: synccore.PartText}}, SendOptions{}, synccore.CodeInvalidPart},
		{"503 without retries", unavailable(""), []synccore.Part{{Type: synccore.PartText, Text: "x"}}, SendOptions{Retries: -1}, synccore.CodeClosed},
		{"503 back in an hour", unavailable("3600"), []synccore.Part{{Type: synccore.PartText, Text: "x"}}, SendOptions{}, synccore.CodeClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			proxy := &faultProxy{target: srv.URL, fault: c.fault}
			ps := httptest.NewServer(proxy)
			defer ps.Close()
			_, err := (&API{BaseURL: ps.URL}).SendWith(context.Background(), sess.SessionID, c.parts, c.opts)
			var se *synccore.Error
			if !errors.As(err, &se) || se.Code != c.code {
				t.Fatalf("error %v, want code %s", err, c.code)
			}
			if keys, _ := proxy.attempts(); len(keys) != 1 {
				t.Fatalf("%d attempts, want 1", len(keys))
			}
		})
	}
}
