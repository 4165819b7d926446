package multinode

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/metrics"
)

// scrapeMetrics reads h's Prometheus text into "name{labels}" -> value.
func scrapeMetrics(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), "GET", "/metrics", nil))
	out := map[string]float64{}
	sc := bufio.NewScanner(io.Reader(rec.Body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// Two nodes on PostgreSQL and NATS: a post sent to the node that does not
// serve the session is forwarded, which both nodes count; the serving node
// counts its lease and its renewals, both count their commits by store and
// show NATS connected.
func TestClusterMetrics(t *testing.T) {
	t.Parallel()
	ns := natstest.Start(t)
	db := pg.Database(t)
	ma, mb := metrics.New(), metrics.New()
	a := startForwardingNode(t, db, "a", ns, func(c *server.Config) { c.Observer = ma })
	b := startForwardingNode(t, db, "b", ns, func(c *server.Config) { c.Observer = mb })
	ma.Watch(a.srv)
	mb.Watch(b.srv)

	sid := a.createSession()
	if r := a.post(sid, "hello"); r.status != http.StatusCreated {
		t.Fatalf("post to a: %d %s", r.status, r.body)
	}
	if r := b.post(sid, "hello again"); r.status != http.StatusCreated {
		t.Fatalf("post to b: %d %s", r.status, r.body)
	}
	// Renewals run every third of the TTL while a holds the lease.
	deadline := time.Now().Add(15 * time.Second)
	var ga map[string]float64
	for {
		ga = scrapeMetrics(t, ma.Handler())
		if ga[`agentsync_lease_renewals_total{outcome="ok"}`] >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node a renewed no lease: %v", ga[`agentsync_lease_renewals_total{outcome="ok"}`])
		}
		time.Sleep(50 * time.Millisecond)
	}
	gb := scrapeMetrics(t, mb.Handler())
	for name, want := range map[string]float64{
		`agentsync_forwards_total{outcome="answered"}`: 1,
		`agentsync_nats_connected`:                     1,
	} {
		if gb[name] != want {
			t.Errorf("node b: %s = %v, want %v", name, gb[name], want)
		}
	}
	for name, want := range map[string]float64{
		`agentsync_forwards_total{outcome="received"}`: 1,
		`agentsync_lease_acquisitions_total`:           1,
		`agentsync_takeovers_total`:                    0,
		`agentsync_nats_connected`:                     1,
	} {
		if ga[name] != want {
			t.Errorf("node a: %s = %v, want %v", name, ga[name], want)
		}
	}
	if n := ga[`agentsync_turns_started_total{model="scripted"}`]; n < 1 || n > 2 {
		t.Errorf("node a: turns started %v, want 1 or 2 (the second post a steer or a turn)", n)
	}
	// The nodes' store is this package's wrapper of the postgres one: it
	// is labelled by its package.
	if n := ga[`agentsync_store_commit_duration_seconds_count{store="multinode"}`]; n < 2 {
		t.Errorf("node a: commits observed %v, want at least 2", n)
	}
	if n := gb[`agentsync_store_commit_duration_seconds_count{store="multinode"}`]; n != 0 {
		t.Errorf("node b: commits observed %v, want none (a serves the session)", n)
	}
}
