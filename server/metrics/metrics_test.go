package metrics_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/metrics"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// scrape reads the metrics endpoint into "name{labels}" -> value; it
// also returns the raw text.
func scrape(t *testing.T, url string) (map[string]float64, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape: line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out, string(body)
}

// call sends a JSON request and decodes a JSON answer into v (if not nil).
func call(t *testing.T, method, url, body string, v any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s %s: %d: %v", method, url, resp.StatusCode, err)
		}
	}
	return resp.StatusCode
}

// After a real turn over HTTP with a subscriber, the endpoint shows the
// documented metrics with the values the turn gave them; no label holds
// the session id.
func TestMetricsAfterATurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agent.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m := metrics.New()
	srv, err := server.New(ctx, server.Config{Store: st, Observer: m,
		Limits: server.Limits{SubscribersPerSession: 1}})
	if err != nil {
		t.Fatal(err)
	}
	m.Watch(srv)
	api := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		api.CloseClientConnections()
		api.Close()
	})
	ms := httptest.NewServer(m.Handler())
	t.Cleanup(ms.Close)

	before, text := scrape(t, ms.URL)
	for _, name := range []string{"agentsync_sessions_loaded", "agentsync_turns_running", "agentsync_subscribers", "agentsync_draining", "go_goroutines"} {
		if _, ok := before[name]; !ok {
			t.Fatalf("no %s before any request:\n%s", name, text)
		}
	}
	if _, ok := before["agentsync_nats_connected"]; ok {
		t.Fatal("agentsync_nats_connected on a server without a transport")
	}

	var sess struct {
		SessionID string `json:"session_id"`
	}
	if code := call(t, "POST", api.URL+"/v1/sessions", "{}", &sess); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	sid := sess.SessionID
	wsURL := "ws" + strings.TrimPrefix(api.URL, "http") + "/v1/sessions/" + sid + "/subscribe"
	ws, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer ws.Close()
	// A second subscription passes SubscribersPerSession: 429.
	if _, resp, err := websocket.DefaultDialer.Dial(wsURL, nil); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second subscription: %v %v, want 429", resp, err)
	}
	if code := call(t, "POST", api.URL+"/v1/sessions/"+sid+"/messages",
		`{"parts":[{"type":"text","text":"scenario:text chars=300 delta=5"}]}`, nil); code != http.StatusCreated {
		t.Fatalf("post: %d", code)
	}
	// The turn is over once the agent message is done.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var page synccore.MessagePage
		call(t, "GET", api.URL+"/v1/sessions/"+sid+"/messages", "", &page)
		if n := len(page.Items); n == 2 && page.Items[1].State == synccore.MessageDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end: %+v", page.Items)
		}
		time.Sleep(10 * time.Millisecond)
	}
	during, text := scrape(t, ms.URL)
	if strings.Contains(text, sid) {
		t.Fatalf("a metric names the session id %s:\n%s", sid, text)
	}
	want := map[string]float64{
		`agentsync_http_requests_total{code="201",route="POST /v1/sessions"}`:               1,
		`agentsync_http_requests_total{code="201",route="POST /v1/sessions/{id}/messages"}`: 1,
		`agentsync_http_requests_total{code="429",route="GET /v1/sessions/{id}/subscribe"}`: 1,
		`agentsync_http_request_duration_seconds_count{route="POST /v1/sessions"}`:          1,
		`agentsync_rate_limited_total{limit="subscribers_per_session"}`:                     1,
		`agentsync_turns_started_total{model="scripted"}`:                                   1,
		`agentsync_model_time_to_first_token_seconds_count{model="scripted"}`:               1,
		`agentsync_model_output_tokens_per_second_count{model="scripted"}`:                  1,
		`agentsync_model_output_tokens_total{model="scripted"}`:                             60, // 300 runes, 5 per delta
		`agentsync_sessions_loaded`:                                                         1,
		`agentsync_turns_running`:                                                           0,
		`agentsync_subscribers`:                                                             1,
		`agentsync_draining`:                                                                0,
	}
	for k, v := range want {
		if got, ok := during[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	// Commits: the prompt, the agent message's first row, its last step.
	if n := during[`agentsync_store_commit_duration_seconds_count{store="sqlite"}`]; n < 3 {
		t.Errorf("sqlite commits observed: %v, want at least 3", n)
	}
	if n := during[`agentsync_http_requests_total{code="200",route="GET /v1/sessions/{id}/messages"}`]; n < 1 {
		t.Errorf("GET messages requests observed: %v", n)
	}

	// The subscription counts once it ends (101, its own route), and the
	// gauge goes back to 0.
	_ = ws.Close()
	deadline = time.Now().Add(10 * time.Second)
	for {
		after, _ := scrape(t, ms.URL)
		if after["agentsync_subscribers"] == 0 &&
			after[`agentsync_http_requests_total{code="101",route="GET /v1/sessions/{id}/subscribe"}`] == 1 {
			// Only the refused one: a subscription's lifetime is no latency.
			if n := after[`agentsync_http_request_duration_seconds_count{route="GET /v1/sessions/{id}/subscribe"}`]; n != 1 {
				t.Errorf("subscribe latencies observed: %v, want 1 (the 429)", n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscription not counted closed: subscribers %v", after["agentsync_subscribers"])
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Probes are counted by their route; draining shows.
	if code := call(t, "GET", api.URL+"/readyz", "", nil); code != http.StatusOK {
		t.Fatalf("readyz: %d", code)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := srv.Close(cctx); err != nil {
		t.Fatal(err)
	}
	call(t, "GET", api.URL+"/readyz", "", nil)
	call(t, "GET", api.URL+"/v1/sessions", "", nil)
	end, _ := scrape(t, ms.URL)
	for k, v := range map[string]float64{
		`agentsync_http_requests_total{code="200",route="GET /readyz"}`: 1,
		`agentsync_http_requests_total{code="503",route="GET /readyz"}`: 1,
		`agentsync_http_requests_total{code="503",route="none"}`:        1,
		`agentsync_draining`: 1,
	} {
		if end[k] != v {
			t.Errorf("after Close: %s = %v, want %v", k, end[k], v)
		}
	}
}
