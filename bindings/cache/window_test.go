package cache

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
	"github.com/gorilla/websocket"
)

// netSwitch is a network a test turns off: dials fail while down, and
// the page reads it carried are counted.
type netSwitch struct {
	down  atomic.Bool
	pages atomic.Int64
}

func (n *netSwitch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if n.down.Load() {
		return nil, errors.New("test: the server is down")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (n *netSwitch) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/messages") {
		n.pages.Add(1)
	}
	return (&http.Transport{DialContext: n.dial}).RoundTrip(r)
}

func (n *netSwitch) config(url, sessionID string, f *File) bindings.Config {
	return bindings.Config{BaseURL: url, SessionID: sessionID, Cache: f, Core: core.NewNativeCore(),
		HTTPClient: &http.Client{Transport: n},
		Dialer:     &websocket.Dialer{NetDialContext: n.dial, HandshakeTimeout: 10 * time.Second}}
}

// ids is the view's messages as "sequence:id:revision" lines.
func ids(v bindings.View) string {
	var b strings.Builder
	for _, m := range v.Messages.All() {
		fmt.Fprintf(&b, "%d:%s:%d:%s\n", m.Sequence, m.MessageID, m.Revision, m.State)
	}
	return b.String()
}

// TestCachedWindowThenSync is the Go host's cache-then-sync (protocol
// §6.9) against a real server: a client on a cache file is closed; the
// next one, started while the server cannot be reached, shows the cached
// window at once (View.Cached, not live) equal to what the first one
// showed; once the server is reachable it catches up with one page read
// of a history three pages long, and ends on the server's view (digest
// and messages equal to a client without a cache). A message that grew
// while away (the cached one was streaming) is the server's after the
// catch-up. A deleted session drops its window.
func TestCachedWindowThenSync(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Paced, so that the reply streamed below is still streaming when
	// its client closes (500 deltas of 2 ms).
	url := startPacedServer(t, model.Speed{Delta: 2 * time.Millisecond})
	api := &bindings.API{BaseURL: url}
	sess, err := api.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// 60 exchanges of one delta each: 120 messages, more than two pages of 50.
	for i := range 60 {
		if _, err := api.Send(ctx, sess.SessionID, synccore.Part{Type: synccore.PartText, Text: fmt.Sprintf("scenario:text chars=12 delta=12 n=%d", i)}); err != nil {
			t.Fatal(err)
		}
		waitDone(ctx, t, api, sess.SessionID, int64(2*(i+1)))
	}
	path := filepath.Join(t.TempDir(), "cache.db")
	var n netSwitch

	f1 := open(t, path)
	c1, err := bindings.Dial(ctx, n.config(url, sess.SessionID, f1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c1.LoadOlder(ctx); err != nil { // the window: 100 messages
		t.Fatal(err)
	}
	if err := c1.WaitFor(ctx, func(v bindings.View) bool { return v.Messages.Len() == 100 && !v.LoadingOlder }); err != nil {
		t.Fatal(err)
	}
	seen := ids(c1.View())
	_ = c1.Close() // writes the window
	_ = f1.Close()

	// Offline: the cached window at once.
	n.down.Store(true)
	f2 := open(t, path)
	c2, err := bindings.New(ctx, n.config(url, sess.SessionID, f2))
	if err != nil {
		t.Fatal(err)
	}
	v := c2.View()
	if !v.Cached || v.Status == synccore.StatusLive || ids(v) != seen {
		t.Fatalf("offline first view: cached=%v status=%s, %d messages; want the cached window of %d", v.Cached, v.Status, v.Messages.Len(), 100)
	}
	if v.Total != 120 || !v.HasMoreOlder {
		t.Fatalf("offline view: total %d, has_more_older %v; want the cached meta (120, true)", v.Total, v.HasMoreOlder)
	}
	time.Sleep(300 * time.Millisecond) // a failed connect keeps the cached window shown
	if v := c2.View(); !v.Cached || ids(v) != seen {
		t.Fatalf("after failed connects: cached=%v status=%s, %d messages", v.Cached, v.Status, v.Messages.Len())
	}

	// Back online: one page, and the server's view.
	n.pages.Store(0)
	n.down.Store(false)
	if err := c2.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c2.WaitFor(ctx, func(v bindings.View) bool { return v.Status == synccore.StatusLive }); err != nil {
		t.Fatal(err)
	}
	if got := n.pages.Load(); got != 1 {
		t.Fatalf("catch-up read %d pages, want 1 when nothing changed", got)
	}
	if b := c2.CatchUpBytes(); b <= 0 {
		t.Fatalf("CatchUpBytes %d, want the page's bytes", b)
	}
	if v := c2.View(); v.Cached || ids(v) != seen {
		t.Fatalf("live after catch-up: cached=%v, messages differ from the cached window:\n%s", v.Cached, ids(v))
	}
	plain, err := bindings.Dial(ctx, bindings.Config{BaseURL: url, SessionID: sess.SessionID, Core: core.NewNativeCore(), PageLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	want, _ := plain.Digest(ctx)
	if got, _ := c2.Digest(ctx); got != want {
		t.Fatalf("digest after catch-up %s, a client without cache %s", got, want)
	}

	// Away while an answer streams: the cached window ends on a message
	// that is not done; the catch-up replaces it with the server's.
	if _, err := c2.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:text chars=4000 delta=8"}); err != nil {
		t.Fatal(err)
	}
	if err := c2.WaitFor(ctx, func(v bindings.View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Role == synccore.RoleAgent && !last.Done() && len(last.Parts) > 0
	}); err != nil {
		t.Fatal(err)
	}
	// While live the saver writes messages once done: the question, not
	// the reply streaming after it (rewritten per delta, a long answer
	// would be written over and over).
	key := bindings.CacheKey{Principal: bindings.CachePrincipal(""), SessionID: sess.SessionID}
	for {
		w, _, err := f2.LoadWindow(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if last := w.Messages[len(w.Messages)-1]; last.Sequence >= 121 {
			for _, m := range w.Messages {
				if !m.Done() {
					t.Fatalf("the live saver cached message %d while it was %s", m.Sequence, m.State)
				}
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the question was never cached")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c2.Close()
	_ = f2.Close()
	waitDone(ctx, t, api, sess.SessionID, 122)
	f3 := open(t, path)
	c3, err := bindings.New(ctx, n.config(url, sess.SessionID, f3))
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if last, _ := c3.View().Messages.Last(); !c3.View().Cached || last == nil || last.Done() {
		t.Fatalf("the cached window should end on the streaming reply: %+v", last)
	}
	if err := c3.WaitFor(ctx, func(v bindings.View) bool { return v.Status == synccore.StatusLive }); err != nil {
		t.Fatal(err)
	}
	last, _ := c3.View().Messages.Last()
	if !last.Done() || len(last.Parts) == 0 || len([]rune(last.Parts[0].Text)) != 4000 {
		t.Fatalf("after catch-up the reply is %s with %d parts, want the server's done reply", last.State, len(last.Parts))
	}
	if got, _ := c3.Digest(ctx); got == "" {
		t.Fatal("no digest")
	}
	_ = c3.Close()

	// Deleted elsewhere: the next client ends not_found and the window is gone.
	if err := api.DeleteSession(ctx, sess.SessionID); err != nil {
		t.Fatal(err)
	}
	c4, err := bindings.New(ctx, n.config(url, sess.SessionID, f3))
	if err != nil {
		t.Fatal(err)
	}
	if err := c4.WaitFor(ctx, func(v bindings.View) bool { return false }); !errors.Is(err, synccore.ErrNotFound) {
		t.Fatalf("a deleted session: %v, want not_found", err)
	}
	_ = c4.Close()
	if _, ok, err := f3.LoadWindow(ctx, key); ok || err != nil {
		t.Fatalf("the deleted session's window is still cached (ok=%v, err=%v)", ok, err)
	}
}

// waitDone waits until the session holds want messages, the last done.
func waitDone(ctx context.Context, t *testing.T, api *bindings.API, sessionID string, want int64) {
	t.Helper()
	for ctx.Err() == nil {
		p, err := api.Messages(ctx, sessionID, 1, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.Total == want && len(p.Items) == 1 && p.Items[0].Done() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("session never reached %d messages", want)
}
