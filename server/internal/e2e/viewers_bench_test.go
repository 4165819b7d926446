//go:build linux

package e2e

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// What a live viewer costs the server (issue 33: at most 16 KB per idle
// viewer, nothing the size of an answer kept per viewer after it). 2,000
// viewers over 10 sessions, subscribed over real WebSockets.
const (
	memViewers  = 2000
	memSessions = 10
	memAnswer   = 256 << 10
)

// BenchmarkViewerMemory/idle is the resident memory per idle viewer of
// a real syncserver process (no race detector), read from /proc, beside
// the empty server. BenchmarkViewerMemory/retained is the live heap and
// stacks per viewer, in process after a full collection, once every
// session streamed a 256 KB answer to its viewers and went idle again,
// beside the same viewers before the answers ("idle-live"): the
// difference is what a viewer kept of an answer.
func BenchmarkViewerMemory(b *testing.B) {
	b.Run("idle", func(b *testing.B) {
		bin := buildServer(b)
		p := startProc(b, bin, "-db", filepath.Join(b.TempDir(), "viewers.db"), "-speed", "0", "-rate-limit", "-1",
			"-max-subscribers-per-session", "-1", "-max-subscribers-per-principal", "-1", "-log-level", "warn")
		pid := p.cmd.Process.Pid
		s := p.client(b)
		ids := viewedSessions(s)
		for range b.N {
			time.Sleep(500 * time.Millisecond)
			empty := rssKiB(b, pid)
			v := watch(b, s, ids)
			time.Sleep(time.Second)
			b.ReportMetric((rssKiB(b, pid)-empty)/memViewers, "KB/viewer")
			v.close()
		}
	})
	b.Run("retained", func(b *testing.B) {
		s := newServer(b, serverOpts{})
		ids := viewedSessions(s)
		for range b.N {
			empty := liveKiB()
			v := watch(b, s, ids)
			time.Sleep(500 * time.Millisecond)
			idle := liveKiB()
			for _, sid := range ids {
				s.say(sid, fmt.Sprintf("scenario:text chars=%d delta=512", memAnswer))
			}
			for _, sid := range ids {
				s.waitIdle(sid, 4)
			}
			v.waitReceived(b, memAnswer)
			time.Sleep(500 * time.Millisecond)
			after := liveKiB()
			b.ReportMetric((idle-empty)/memViewers, "idle-live-KB/viewer")
			b.ReportMetric((after-empty)/memViewers, "KB/viewer")
			v.close()
		}
	})
}

// viewedSessions creates the sessions, each with a first exchange (the
// session loaded, its model and composer warm).
func viewedSessions(s *testServer) []string {
	ids := make([]string, memSessions)
	for i := range ids {
		ids[i] = s.createSession()
		s.say(ids[i], "hello")
	}
	return ids
}

// viewers are raw WebSocket readers that count the bytes they receive.
type viewers struct {
	conns    []*websocket.Conn
	received []atomic.Int64
	wg       sync.WaitGroup
}

func watch(b *testing.B, s *testServer, ids []string) *viewers {
	v := &viewers{conns: make([]*websocket.Conn, memViewers), received: make([]atomic.Int64, memViewers)}
	for i := range v.conns {
		c, _, err := websocket.DefaultDialer.Dial(s.wsURL(ids[i%len(ids)])+"?kept=1", nil)
		if err != nil {
			b.Fatalf("viewer %d: %v", i, err)
		}
		v.conns[i] = c
		v.wg.Add(1)
		go func() {
			defer v.wg.Done()
			for {
				_, data, err := c.ReadMessage()
				if err != nil {
					return
				}
				v.received[i].Add(int64(len(data)))
			}
		}()
	}
	return v
}

// waitReceived waits until every viewer received at least n bytes.
func (v *viewers) waitReceived(b *testing.B, n int64) {
	deadline := time.Now().Add(time.Minute)
	for i := range v.received {
		for v.received[i].Load() < n {
			if time.Now().After(deadline) {
				b.Fatalf("viewer %d got %d bytes of %d", i, v.received[i].Load(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (v *viewers) close() {
	for _, c := range v.conns {
		c.Close()
	}
	v.wg.Wait()
}

func rssKiB(b *testing.B, pid int) float64 {
	b.Helper()
	mib, err := readRSS(pid)
	if err != nil {
		b.Fatal(err)
	}
	return mib * 1024
}

// liveKiB is this process's live heap and goroutine stacks after a full
// collection.
func liveKiB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse+m.StackInuse) / 1024
}
