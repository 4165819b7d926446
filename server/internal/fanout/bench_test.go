package fanout

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// benchFanout publishes b.N frames to n subscribers with the default queue
// bound, each drained by its own goroutine (as each WebSocket writer drains
// its subscriber), and reports the frames actually delivered per second
// and how many subscribers were resynced for falling behind. The publisher
// never lets the readers fall more than half a queue behind (a model does
// not outrun its readers by 4096 frames either), so the figure is the
// sustained rate, not the rate of filling queues that then overflow.
func benchFanout(b *testing.B, n int) {
	h := NewHub(Limits{})
	var delivered, resyncs atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		s := h.Subscribe(nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				fs, err := s.Next(context.Background())
				if err != nil {
					return
				}
				for _, f := range fs {
					if f.Kind == synccore.FrameResync {
						resyncs.Add(1)
					} else {
						delivered.Add(1)
					}
				}
			}
		}()
	}
	f := synccore.Frame{Kind: synccore.FrameDelta, MessageID: "msg_1", Revision: 2, PartID: "agent-text:1", Text: "hello "}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	const slack = DefaultQueueLimit / 2
	for i := 0; i < b.N; i++ {
		f.Offset = int64(i)
		h.Publish(f)
		if i%256 == 255 {
			for int64(i+1-slack)*int64(n) > delivered.Load() {
				runtime.Gosched()
			}
		}
	}
	h.Close()
	wg.Wait() // every queued frame delivered
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(delivered.Load())/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(resyncs.Load()), "resyncs")
}

// BenchmarkFanout1 is the baseline: one subscriber.
func BenchmarkFanout1(b *testing.B) { benchFanout(b, 1) }

func BenchmarkFanout100(b *testing.B) { benchFanout(b, 100) }
