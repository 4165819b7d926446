package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// Sized for a 2-core machine under -race: about 20 s.
const (
	soakSessions  = 2000
	soakWorkers   = 8
	soakIdle      = 300 * time.Millisecond
	soakMaxLoaded = 50
)

func evicting(idle time.Duration, maxLoaded int) func(*session.Config) {
	return func(c *session.Config) { c.IdleTimeout, c.MaxLoaded = idle, maxLoaded }
}

// TestEvictionSoak: 2,000 sessions each get one short exchange, then sit
// idle. The cap keeps at most MaxLoaded (plus the few in use) in memory
// meanwhile, the idle timeout then empties it, and every session reads
// back complete. A subscriber on an evicted session converges on the
// server's digest through a new turn, keeps the session loaded while it
// listens, and lets it go once gone.
func TestEvictionSoak(t *testing.T) {
	s := newServer(t, serverOpts{Manager: evicting(soakIdle, soakMaxLoaded)})
	ids := make([]string, soakSessions)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		peak   int
		nextID = make(chan int)
	)
	for range soakWorkers {
		wg.Go(func() {
			for i := range nextID {
				sid, err := shortExchange(s.URL, i)
				mu.Lock()
				ids[i] = sid
				if err != nil {
					errs = append(errs, err)
				}
				// Loaded beyond the running turns: what the cap bounds.
				peak = max(peak, s.Mgr.Loaded()-int(s.Mgr.Running()))
				mu.Unlock()
			}
		})
	}
	for i := range soakSessions {
		nextID <- i
	}
	close(nextID)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d exchanges failed, first: %v", len(errs), errs[0])
	}
	// Besides sessions with a running turn, the cap is passed only by the
	// requests in flight (one per worker) and the turns that ended since
	// the last load (the next load evicts them); the samples are not
	// atomic, hence the margin.
	t.Logf("at most %d idle sessions loaded at once (cap %d)", peak, soakMaxLoaded)
	if peak > soakMaxLoaded+2*soakWorkers {
		t.Errorf("up to %d idle sessions loaded, cap %d", peak, soakMaxLoaded)
	}

	waitUntil(t, 30*time.Second, "every turn over", func() bool { return s.Mgr.Running() == 0 })
	waitUntil(t, 10*time.Second, "every idle session evicted", func() bool { return s.Mgr.Loaded() == 0 })
	if n := s.Mgr.Evicted(); n < soakSessions {
		t.Fatalf("%d evictions for %d sessions", n, soakSessions)
	}

	// Everything reads back: the user message and the finished answer.
	for i, sid := range ids {
		msgs := s.all(sid, true)
		if len(msgs) != 2 || msgs[0].Parts[0].Text != fmt.Sprintf("soak %d", i) ||
			msgs[1].Role != synccore.RoleAgent || msgs[1].State != synccore.MessageDone || len(msgs[1].Parts) == 0 {
			t.Fatalf("session %d after eviction: %s", i, summary(msgs))
		}
	}

	// A subscriber on an evicted session: it loads again, a new turn
	// streams to the subscriber, which ends with the server's digest.
	sid := ids[soakSessions/2]
	h := newNetHost(t, s, sid, 50)
	h.pump(50 * time.Millisecond)
	s.say(sid, "scenario:text chars=2000 delta=7")
	h.converge(sid, 30*time.Second)
	want, err := s.Mgr.Digest(t.Context(), sid, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.c.Digest(); got != want {
		t.Fatalf("client digest %s, server %s", got, want)
	}
	// Listening keeps it in memory past the idle timeout...
	time.Sleep(3 * soakIdle)
	if n := s.Mgr.Loaded(); n != 1 {
		t.Fatalf("%d sessions loaded while one has a subscriber, want 1", n)
	}
	if h.opened != 1 {
		t.Fatalf("the subscriber reconnected %d times: it noticed something", h.opened-1)
	}
	// ...and once it leaves, the session goes too.
	h.closeConn()
	waitUntil(t, 10*time.Second, "the session evicted after its subscriber left", func() bool { return s.Mgr.Loaded() == 0 })
	if msgs := s.all(sid, true); len(msgs) != 4 || !noneStreaming(msgs) {
		t.Fatalf("after the second eviction: %s", summary(msgs))
	}
}

// TestEvictionSparesRunningTurns: with an idle timeout far shorter than a
// turn, the session stays loaded while it streams (its message finishes
// whole), and leaves memory once done.
func TestEvictionSparesRunningTurns(t *testing.T) {
	s := newServer(t, serverOpts{Speed: model.Paced(2 * time.Millisecond), Manager: evicting(20*time.Millisecond, 1)})
	sid := s.createSession()
	other := s.createSession()
	s.say(sid, "scenario:text chars=600 delta=3") // about 200 deltas: 0.4 s
	s.say(other, "hello")                         // loads a second session past the cap of 1
	for s.Mgr.Running() > 0 {
		if s.Mgr.Loaded() < int(s.Mgr.Running()) {
			t.Fatalf("%d sessions loaded while %d turns run", s.Mgr.Loaded(), s.Mgr.Running())
		}
		time.Sleep(5 * time.Millisecond)
	}
	msgs := s.waitIdle(sid, 2)
	if len(msgs) != 2 || msgs[1].State != synccore.MessageDone || len(msgs[1].Parts[0].Text) < 600 {
		t.Fatalf("the turn's message: %s", summary(msgs))
	}
	waitUntil(t, 5*time.Second, "both sessions evicted", func() bool { return s.Mgr.Loaded() == 0 })
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shortExchange creates a session and posts one user message (its answer
// streams on in the background); safe on any goroutine.
func shortExchange(base string, i int) (string, error) {
	var sess sessionBody
	if err := postJSON(base+"/v1/sessions", map[string]any{}, http.StatusCreated, &sess); err != nil {
		return "", err
	}
	if err := postJSON(base+"/v1/sessions/"+sess.SessionID+"/messages", textParts(fmt.Sprintf("soak %d", i)), http.StatusCreated, nil); err != nil {
		return sess.SessionID, err
	}
	return sess.SessionID, nil
}

// soakClient keeps a connection per soak worker alive (the default keeps
// two per host), so thousands of exchanges do not open thousands of
// connections.
var soakClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

func postJSON(url string, body any, want int, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := soakClient.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, resp.Body) // read to the end: the connection is reused
		resp.Body.Close()
	}()
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: status %d, want %d", url, resp.StatusCode, want)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}
