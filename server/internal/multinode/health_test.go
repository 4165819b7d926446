package multinode

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/server/internal/pgtest"
	"github.com/agentsync/agentsync/server/natsbus"
	"github.com/agentsync/agentsync/server/store/postgres"
)

// readyz is one GET /readyz without credentials: its status and the
// errors of its failing checks by name.
func readyz(t *testing.T, url string) (int, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name  string `json:"name"`
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		} `json:"checks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET /readyz: %d: %v", resp.StatusCode, err)
	}
	failing := map[string]string{}
	seen := map[string]bool{}
	for _, c := range body.Checks {
		seen[c.Name] = true
		if !c.OK {
			failing[c.Name] = c.Error
		}
	}
	for _, want := range []string{"serving", "store", "transport"} {
		if !seen[want] {
			t.Fatalf("readyz has no %q check: %+v", want, body.Checks)
		}
	}
	if body.OK != (len(failing) == 0) || (resp.StatusCode == http.StatusOK) != body.OK {
		t.Fatalf("readyz %d ok=%v with failing checks %v", resp.StatusCode, body.OK, failing)
	}
	return resp.StatusCode, failing
}

// awaitNotReady polls /readyz until it is 503 with check failing, or fails
// the test after 15 s.
func awaitNotReady(t *testing.T, url, check string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, failing := readyz(t, url)
		if msg, ok := failing[check]; ok && st == http.StatusServiceUnavailable {
			return msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz still %d (failing %v), want the %q check failing", st, failing, check)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A node on PostgreSQL and NATS is ready while both answer; readiness goes
// false (the transport check) when NATS goes away and comes back with it,
// and goes false (the store check) when PostgreSQL stops. The database is
// a private cluster, so stopping it touches no other test.
func TestReadinessFollowsPostgresAndNATS(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := pgtest.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cl.Stop()
		}
	})
	url, err := cl.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, url, postgres.Options{Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ns := natstest.Start(t)
	nc := natstest.Connect(t, ns.URL(), "ready")
	srv, err := server.New(ctx, server.Config{Store: st, Logger: logger(),
		Cluster: &server.Cluster{Node: "ready", Transport: natsbus.New(nc)}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		hs.CloseClientConnections()
		hs.Close()
	})

	if code, failing := readyz(t, hs.URL); code != http.StatusOK {
		t.Fatalf("readyz on a healthy node: %d %v", code, failing)
	}
	if s := srv.Stats(); !s.Clustered || !s.TransportConnected {
		t.Fatalf("stats %+v, want a connected transport", s)
	}

	ns.Restart(t, 300*time.Millisecond)
	// Restart returns with the server back: the client reconnects.
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, failing := readyz(t, hs.URL)
		if code == http.StatusOK {
			break
		}
		if _, ok := failing["transport"]; !ok || len(failing) != 1 || time.Now().After(deadline) {
			t.Fatalf("readyz after NATS came back: %d %v", code, failing)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ns.Stop()
	t.Logf("NATS down: %s", awaitNotReady(t, hs.URL, "transport"))
	if s := srv.Stats(); s.TransportConnected {
		t.Fatalf("stats %+v with NATS down", s)
	}

	stopped = true
	if err := cl.Stop(); err != nil {
		t.Fatalf("stop PostgreSQL: %v", err)
	}
	t.Logf("PostgreSQL down: %s", awaitNotReady(t, hs.URL, "store"))
}
