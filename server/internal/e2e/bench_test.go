package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentsync/agentsync/synccore"
)

// benchDeltas is the number of delta mutations one benchmark iteration
// streams (scenario:long with 16 runes per delta).
const benchDeltas = 5000

// BenchmarkFanoutWebSocket100 streams one session's answer to 100 real
// WebSocket subscribers on loopback and reports the mutations delivered
// per second across all of them; subs=1 is the baseline of the same run.
// The subscriber queues are large enough that nobody is resynced: this
// measures throughput, TestSlowSubscriber the slow-consumer policy.
// subs=100/presence: the same 100 ask for signals (?signals=1) and the
// session's presence churns (a typing post every 50 ms, each a presence
// signal to all 100), the cost of presence on fan-out beside subs=100.
func BenchmarkFanoutWebSocket100(b *testing.B) {
	for _, subs := range []int{1, 100} {
		b.Run(fmt.Sprintf("subs=%d", subs), func(b *testing.B) { benchFanout(b, subs, false) })
	}
	b.Run("subs=100/presence", func(b *testing.B) { benchFanout(b, 100, true) })
}

// countFrames reads the msgpack array header of one message: the number
// of frames in it, without decoding them.
func countFrames(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	switch c := data[0]; {
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f)
	case c == 0xdc && len(data) >= 3:
		return int(data[1])<<8 | int(data[2])
	case c == 0xdd && len(data) >= 5:
		return int(data[1])<<24 | int(data[2])<<16 | int(data[3])<<8 | int(data[4])
	}
	return 0
}

// readInto appends all of r to buf, growing it only when needed.
func readInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func benchFanout(b *testing.B, subs int, presence bool) {
	// Every delta its own frame, as the readers count frames (folding would
	// give each reader its own count).
	s := newServer(b, serverOpts{QueueLimit: 1 << 17, FoldBytes: -1})
	sid := s.createSession()

	// Subscriber 0 is the observer: it decodes every frame (off its read
	// loop) to find the frame that closes each answer. The others only
	// count frames, as cheaply as a reader can.
	counts := make([]atomic.Int64, subs)
	doneAt := make(chan int64, 16)
	var wg sync.WaitGroup
	conns := make([]*websocket.Conn, subs)
	// Large read buffers: fewer read syscalls for the clients, whose cost
	// shares the 2 cores with the server's.
	dialer := websocket.Dialer{ReadBufferSize: 64 << 10}
	for i := range subs {
		query := "?kept=1" // as the reference hosts ask (protocol §4.5)
		if presence {
			query += "&signals=1" // and signals (§4.6), as the JS host does
		}
		c, _, err := dialer.Dial(s.wsURL(sid)+query, nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		var inbox chan []byte
		if i == 0 {
			inbox = make(chan []byte, 1<<16)
			go func() {
				var n int64
				for data := range inbox {
					for _, f := range decodeFrames(b, data) {
						n++
						if agentDone(f) {
							doneAt <- n
						}
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if inbox != nil {
				defer close(inbox)
			}
			// Read into one reused buffer: ReadMessage's io.ReadAll
			// allocation was the clients' main cost, not the server's.
			buf := make([]byte, 0, 64<<10)
			for {
				_, r, err := c.NextReader()
				if err != nil {
					return
				}
				buf, err = readInto(buf[:0], r)
				if err != nil {
					return
				}
				counts[i].Add(int64(countFrames(buf)))
				if inbox != nil {
					inbox <- bytes.Clone(buf)
				}
			}
		}()
	}
	total := func() int64 {
		var t int64
		for i := range counts {
			t += counts[i].Load()
		}
		return t
	}
	// waitAll waits until every subscriber has target frames.
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
	// One warm-up answer, not measured.
	prompt := fmt.Sprintf("scenario:long chars=%d delta=16", benchDeltas*16)
	s.say(sid, prompt)
	waitAll(<-doneAt)

	stopTyping := make(chan struct{})
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		if !presence {
			return
		}
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for typing := true; ; typing = !typing {
			select {
			case <-stopTyping:
				return
			case <-t.C:
				s.do("POST", "/v1/sessions/"+sid+"/typing", map[string]bool{"typing": typing})
			}
		}
	}()
	b.ResetTimer()
	start := time.Now()
	before := total()
	for i := 0; i < b.N; i++ {
		s.say(sid, prompt)
		waitAll(<-doneAt)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	close(stopTyping)
	<-typed
	delivered := total() - before
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(delivered)/float64(b.N*subs), "frames/sub/op")
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
}

// BenchmarkMessagesHTTP reads the head page of 50 messages over HTTP in
// msgpack (and JSON), with GET /healthz as the baseline of the same run.
func BenchmarkMessagesHTTP(b *testing.B) {
	s := newServer(b, serverOpts{})
	sid := s.createSession()
	s.exchange(sid, 30)
	if p := s.page(sid, ""); len(p.Items) != synccore.DefaultPageLimit {
		b.Fatalf("page has %d items", len(p.Items))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(b *testing.B, path, accept string) {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		var bytes int64
		// Warm up: open the keep-alive connection and fill the caches, so
		// even a 1x run measures the steady state.
		for i := 0; i < 5; i++ {
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
			}
			bytes = n
		}
		b.ReportMetric(float64(bytes), "bytes/op")
	}
	b.Run("healthz", func(b *testing.B) { get(b, "/healthz", "") })
	b.Run("page50-msgpack", func(b *testing.B) {
		get(b, "/v1/sessions/"+sid+"/messages?limit=50", "application/msgpack")
	})
	b.Run("page50-json", func(b *testing.B) { get(b, "/v1/sessions/"+sid+"/messages?limit=50", "") })
}
