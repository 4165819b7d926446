package e2e

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestIdleSubscriptionHasNoWriterGoroutine: a subscription's frame writer
// runs only while it has frames to write (api.frameWriter), so idle
// viewers, before and after an answer, hold one goroutine each (the
// control-frame reader). Not parallel: it counts every goroutine of the
// process by its stack.
func TestIdleSubscriptionHasNoWriterGoroutine(t *testing.T) {
	s := newServer(t, serverOpts{})
	sid := s.createSession()
	const viewers = 40
	for range viewers {
		c, _, err := websocket.DefaultDialer.Dial(s.wsURL(sid), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// Never read: what the server writes (hello, snapshots, a short
		// answer) fits in the socket's buffers.
	}
	waitSubscriptionGoroutines(t, viewers)
	s.say(sid, "hello")
	s.waitIdle(sid, 2)
	waitSubscriptionGoroutines(t, viewers)
}

// waitSubscriptionGoroutines waits until the process runs exactly n
// goroutines of subscriptions (a stack in the API's pump or frame writer).
func waitSubscriptionGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var buf bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, g := range strings.Split(buf.String(), "\n\n") {
			if strings.Contains(g, "api.(*api).pump") || strings.Contains(g, "api.(*frameWriter)") {
				got++
			}
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of %d idle subscriptions, want one each", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
