package server_test

import (
	"math"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
)

// TestZeroLimitsAreTheDefaults: a zero Limits is every documented default,
// none of them "off" (a Config with only a store evicts idle sessions).
func TestZeroLimitsAreTheDefaults(t *testing.T) {
	r := server.Resolve(server.Limits{})
	if r.IdleTimeout != server.DefaultIdleTimeout || r.IdleTimeout <= 0 {
		t.Errorf("idle timeout %s, want the default %s", r.IdleTimeout, server.DefaultIdleTimeout)
	}
	for name, got := range map[string][2]int64{
		"MaxLoaded":     {int64(r.MaxLoaded), server.DefaultMaxLoaded},
		"MaxBodyBytes":  {r.MaxBodyBytes, server.DefaultMaxBodyBytes},
		"QueueLimit":    {int64(r.QueueLimit), server.DefaultQueueLimit},
		"QueueBytes":    {int64(r.QueueBytes), server.DefaultQueueBytes},
		"FoldBytes":     {int64(r.FoldBytes), server.DefaultFoldBytes},
		"ToolTimeout":   {int64(r.ToolTimeout), int64(server.DefaultToolTimeout)},
		"MaxToolOutput": {int64(r.MaxToolOutput), server.DefaultMaxToolOutput},
		"MaxSteps":      {int64(r.MaxSteps), server.DefaultMaxSteps},
		"PingInterval":  {int64(r.PingInterval), int64(server.DefaultPingInterval)},
		"WriteTimeout":  {int64(r.WriteTimeout), int64(server.DefaultWriteTimeout)},
		"RequestBurst":  {int64(r.Client().RequestBurst), server.DefaultRequestBurst},
		"PerSession":    {int64(r.Client().SubscribersPerSession), server.DefaultSubscribersPerSession},
		"PerPrincipal":  {int64(r.Client().SubscribersPerClient), server.DefaultSubscribersPerPrincipal},
	} {
		if got[0] != got[1] || got[1] <= 0 {
			t.Errorf("%s: %d, want the default %d", name, got[0], got[1])
		}
	}
	if r.Client().RequestRate != server.DefaultRequestsPerSecond {
		t.Errorf("rate %v", r.Client().RequestRate)
	}
}

// TestNegativeLimitsAreOff: every negative field turns its bound off.
func TestNegativeLimitsAreOff(t *testing.T) {
	r := server.Resolve(server.Limits{RequestsPerSecond: -1, RequestBurst: -1, SubscribersPerSession: -1,
		SubscribersPerPrincipal: -1, MaxBodyBytes: -1, QueueLimit: -1, QueueBytes: -1, FoldBytes: -1,
		IdleTimeout: -1, MaxLoaded: -1, ToolTimeout: -1, MaxToolOutput: -1, MaxSteps: -1, PingInterval: -1, WriteTimeout: -1})
	c := r.Client()
	if c.RequestRate != 0 || c.RequestBurst != 0 || c.SubscribersPerSession != 0 || c.SubscribersPerClient != 0 {
		t.Errorf("client limits not off: %+v", c)
	}
	if r.IdleTimeout != 0 || r.MaxLoaded != 0 || r.FoldBytes != -1 {
		t.Errorf("idle %s, max loaded %d, fold %d: want the internals' off (0, 0, -1)", r.IdleTimeout, r.MaxLoaded, r.FoldBytes)
	}
	if r.MaxBodyBytes != math.MaxInt64 || r.QueueLimit != math.MaxInt || r.QueueBytes != math.MaxInt ||
		r.MaxToolOutput != math.MaxInt || r.MaxSteps != math.MaxInt {
		t.Errorf("size bounds not off: %+v", r)
	}
	for name, d := range map[string]time.Duration{"ToolTimeout": r.ToolTimeout, "PingInterval": r.PingInterval, "WriteTimeout": r.WriteTimeout} {
		if d < 100*365*24*time.Hour/10 {
			t.Errorf("%s %s: want no bound", name, d)
		}
	}
	p := server.Resolve(server.Limits{IdleTimeout: time.Second, MaxLoaded: 3, MaxSteps: 5})
	if p.IdleTimeout != time.Second || p.MaxLoaded != 3 || p.MaxSteps != 5 {
		t.Errorf("positive values changed: %+v", p)
	}
}

// TestIdleSessionsEvicted: a server given only a store and a short idle
// timeout unloads an idle session from memory.
func TestIdleSessionsEvicted(t *testing.T) {
	l := start(t, "", server.Config{Limits: server.Limits{IdleTimeout: 50 * time.Millisecond}})
	id := l.createSession("")
	ws, a := l.subscribe("", id) // a subscriber keeps it loaded
	if ws == nil || server.LoadedOf(l.srv) != 1 {
		t.Fatalf("subscribe: %d %s, %d loaded, want 1", a.status, a.body, server.LoadedOf(l.srv))
	}
	ws.Close()
	deadline := time.Now().Add(20 * time.Second)
	for server.LoadedOf(l.srv) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still loaded after 20 s with a 50 ms idle timeout", server.LoadedOf(l.srv))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
