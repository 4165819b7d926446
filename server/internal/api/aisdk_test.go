package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/internal/session"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// TestChatStreamSurvivesResync: a UI stream whose reader stalls falls
// behind its subscription (a queue of 8 frames, small socket buffers); the
// server tells it to resynchronise, and the stream re-subscribes and sends
// only what the client lacks. The text read equals the snapshot's exactly.
func TestChatStreamSurvivesResync(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "chat.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mgr, err := session.NewManager(ctx, session.Config{Store: st, QueueLimit: 8, QueueBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown(ctx)
	var logs lockedBuffer
	srv := httptest.NewUnstartedServer(New(Config{
		Manager: mgr,
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	srv.Listener = smallWrites{srv.Listener}
	srv.Start()
	defer srv.Close()

	sess, err := mgr.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	const chars = 200000
	body := `{"id":"` + sess.SessionID + `","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"scenario:long chars=200000 delta=7"}]}]}`
	res, err := http.Post(srv.URL+"/v1/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("X-Vercel-AI-UI-Message-Stream") != "v1" {
		t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
	}
	// Stall after the first chunk: the handler blocks on its socket while
	// the reply streams on and the subscription's queue overflows.
	r := bufio.NewReaderSize(res.Body, 1<<10)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)

	var text strings.Builder
	ended, finished := false, false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct{ Type, Delta string }
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		switch c.Type {
		case "text-delta":
			text.WriteString(c.Delta)
		case "text-end":
			ended = true
		case "finish":
			finished = true
		}
	}
	if !finished || !ended {
		t.Fatalf("the stream did not finish (finish %v, text-end %v)", finished, ended)
	}
	if !strings.Contains(logs.String(), "ui stream resubscribes") {
		t.Fatalf("the reader never fell behind: the test did not exercise a resync\n%s", logs.String())
	}
	page, err := mgr.Messages(ctx, sess.SessionID, store.PageQuery{Limit: 1})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("snapshot: %v %v", page, err)
	}
	want := page.Items[0].Parts[0].Text
	if page.Items[0].State != synccore.MessageDone || len([]rune(want)) != chars {
		t.Fatalf("snapshot message %s with %d runes", page.Items[0].State, len([]rune(want)))
	}
	if got := text.String(); got != want {
		t.Fatalf("streamed %d bytes, snapshot %d; equal prefix %d bytes", len(got), len(want), commonPrefix(got, want))
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// smallWrites gives every accepted connection a small send buffer, so a
// stalled reader blocks the server's writes soon.
type smallWrites struct{ net.Listener }

func (l smallWrites) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// lockedBuffer is a log sink safe for the handler's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestChatStreamFindsAReplyItMissed: with a queue of one frame, the
// subscription overflows before the stream has seen its reply start (often
// before the reply is even over); the stream finds the reply in the
// snapshot instead of waiting for frames that will never come.
func TestChatStreamFindsAReplyItMissed(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "chat.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mgr, err := session.NewManager(ctx, session.Config{Store: st, QueueLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown(ctx)
	srv := httptest.NewServer(New(Config{Manager: mgr}))
	defer srv.Close()
	sess, err := mgr.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for i := range 5 {
		body := fmt.Sprintf(`{"id":%q,"messages":[{"id":"u%d","role":"user","parts":[{"type":"text","text":"hello %d"}]}]}`, sess.SessionID, i, i)
		res, err := client.Post(srv.URL+"/v1/chat", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("exchange %d: the stream never ended: %v", i, err)
		}
		if !strings.Contains(string(data), `"type":"finish"`) {
			t.Fatalf("exchange %d: no finish chunk in %q", i, data)
		}
	}
}
