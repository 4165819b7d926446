package multinode

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/internal/natstest"
	"github.com/agentsync/agentsync/synccore"
)

// benchSubscribers and benchDeltas: one iteration streams an answer of
// benchDeltas deltas to benchSubscribers WebSocket subscribers.
const (
	benchSubscribers = 100
	benchDeltas      = 2000
)

// BenchmarkFanoutNodes streams one session's answers to 100 real
// WebSocket subscribers on loopback and reports the frames delivered per
// second across all of them: nodes=1 has them all on the node that
// serves the session, nodes=3 spreads them over it and two nodes that
// follow the session over NATS (embedded, in the same process, as are the
// nodes: the machine's cores are shared by all of them).
func BenchmarkFanoutNodes(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) { benchFanoutNodes(b, nodes) })
	}
}

func benchFanoutNodes(b *testing.B, count int) {
	ns := natstest.Start(b)
	db := pg.Database(b)
	unbounded := func(c *server.Config) {
		c.Limits.SubscribersPerSession, c.Limits.SubscribersPerPrincipal = -1, -1
		c.Limits.QueueLimit = 1 << 17
		c.Limits.FoldBytes = -1 // every delta its own frame: the readers count frames
	}
	var nodes []*node
	for i := range count {
		nodes = append(nodes, startNATSNode(b, db, ns, fmt.Sprintf("node-%d", i), steadyTTL, unbounded))
	}
	owner := nodes[0]
	sid := owner.createSession()
	prompt := fmt.Sprintf("scenario:long chars=%d delta=16", benchDeltas*16)
	// A first turn makes nodes[0] the owner: followers subscribe after it.
	answer := func() {
		if r := owner.post(sid, prompt); r.status != http.StatusCreated {
			b.Fatalf("post: %d %s", r.status, r.body)
		}
	}
	answer()
	turnDone(b, owner, sid, 2, time.Minute)

	counts := make([]atomic.Int64, benchSubscribers)
	doneAt := make(chan int64, 16)
	var wg sync.WaitGroup
	dialer := websocket.Dialer{ReadBufferSize: 64 << 10}
	for i := range benchSubscribers {
		c, _, err := dialer.Dial(nodes[i%count].wsURL(sid), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, data, err := c.ReadMessage()
				if err != nil {
					return
				}
				if i > 0 {
					counts[i].Add(countFrames(data))
					continue
				}
				// Subscriber 0 decodes, to find each answer's end; the
				// others count frames as cheaply as a reader can (a
				// resynced one stops counting: waitAll fails).
				frames, err := wire.DecodeFrames(data)
				if err != nil {
					b.Error(err)
					return
				}
				for _, f := range frames {
					n := counts[i].Add(1)
					if f.Kind == synccore.FrameMessage && f.Message.Role == synccore.RoleAgent && f.Message.State == synccore.MessageDone {
						doneAt <- n
					}
				}
			}
		}()
	}
	// waitAll waits until every subscriber has target frames: all got
	// the same batches.
	waitAll := func(target int64) {
		deadline := time.Now().Add(2 * time.Minute)
		for i := range counts {
			for counts[i].Load() < target {
				if time.Now().After(deadline) {
					b.Fatalf("subscriber %d stuck at %d of %d frames", i, counts[i].Load(), target)
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	total := func() (t int64) {
		for i := range counts {
			t += counts[i].Load()
		}
		return t
	}
	answer() // warm-up, not measured
	waitAll(<-doneAt)

	b.ResetTimer()
	start, before := time.Now(), total()
	for range b.N {
		answer()
		waitAll(<-doneAt)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(total()-before)/elapsed.Seconds(), "deliveries/s")
}

// countFrames reads the msgpack array header of one WebSocket message:
// its number of frames.
func countFrames(data []byte) int64 {
	switch c := data[0]; {
	case c >= 0x90 && c <= 0x9f:
		return int64(c & 0x0f)
	case c == 0xdc:
		return int64(data[1])<<8 | int64(data[2])
	case c == 0xdd:
		return int64(data[1])<<24 | int64(data[2])<<16 | int64(data[3])<<8 | int64(data[4])
	}
	return 0
}
