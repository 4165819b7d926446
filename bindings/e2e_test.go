package bindings

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/bindings/internal/corehook"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// testServer is the real reference server in-process: SQLite in a temp
// file, the session engine, the HTTP/WebSocket API on 127.0.0.1.
type testServer struct {
	URL string
	srv *server.Server
}

func startServer(t *testing.T, speed model.Speed) *testServer {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "e2e.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	srv, err := server.New(ctx, server.Config{Store: st, Speed: speed, Logger: quiet})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close(ctx)
		_ = st.Close()
	})
	return &testServer{URL: hs.URL, srv: srv}
}

// prefixWatch checks, for every view a subscriber sees, that each text of
// each part only ever grows: each observation is prefix-comparable with the
// longest one seen, and the final text extends the longest. Then every
// observed text is a prefix of the final text: nothing shown twice, nothing
// torn.
type prefixWatch struct {
	mu      sync.Mutex
	longest map[string]string
	views   int
	errs    []string
}

func newPrefixWatch() *prefixWatch { return &prefixWatch{longest: map[string]string{}} }

func (p *prefixWatch) observe(v View) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.views++
	for _, m := range v.Messages.All() {
		for _, part := range m.Parts {
			if part.Text == "" {
				continue
			}
			key := m.MessageID + "/" + part.PartID
			l := p.longest[key]
			switch {
			case strings.HasPrefix(l, part.Text):
			case strings.HasPrefix(part.Text, l):
				p.longest[key] = part.Text
			default:
				if len(p.errs) < 5 {
					p.errs = append(p.errs, fmt.Sprintf("part %s: shown %q after %q", key, clip(part.Text), clip(l)))
				}
			}
		}
	}
}

// checkFinal fails unless every part's final text extends what was shown.
func (p *prefixWatch) checkFinal(t *testing.T, final []synccore.Message) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errs {
		t.Error(e)
	}
	texts := map[string]string{}
	for _, m := range final {
		for _, part := range m.Parts {
			texts[m.MessageID+"/"+part.PartID] = part.Text
		}
	}
	for key, l := range p.longest {
		f, ok := texts[key]
		if !ok {
			t.Errorf("part %s was shown but is not in the server's snapshot", key)
			continue
		}
		if !strings.HasPrefix(f, l) {
			t.Errorf("part %s: shown %q, final %q", key, clip(l), clip(f))
		}
	}
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:30] + "…" + s[len(s)-30:]
	}
	return s
}

// turnDone reports whether the view's newest message is a done agent
// message after the user message with sequence userSeq.
func turnDone(userSeq int64) func(View) bool {
	return func(v View) bool {
		last, ok := v.Messages.Last()
		if v.Status != synccore.StatusLive || !ok {
			return false
		}
		return last.Sequence > userSeq && last.Role == synccore.RoleAgent && last.State == synccore.MessageDone
	}
}

// pendingInteraction returns the id of a pending interaction in the view.
func pendingInteraction(v View) (string, bool) {
	for _, m := range v.Messages.All() {
		for _, p := range m.Parts {
			if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
				return p.InteractionID, true
			}
		}
	}
	return "", false
}

// runTurn sends text and drives the turn to its end, answering any
// interaction with answer (when not nil).
func runTurn(ctx context.Context, t *testing.T, c *Client, text string, answer *InteractionResponse) {
	t.Helper()
	msg, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: text})
	if err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
	if answer != nil {
		var id string
		err := c.WaitFor(ctx, func(v View) bool {
			var ok bool
			id, ok = pendingInteraction(v)
			return ok
		})
		if err != nil {
			t.Fatalf("%q: wait for the interaction: %v (status %s)", text, err, c.Status())
		}
		if _, err := c.Answer(ctx, id, *answer); err != nil {
			t.Fatalf("%q: answer %s: %v", text, id, err)
		}
	}
	if err := c.WaitFor(ctx, turnDone(msg.Sequence)); err != nil {
		t.Fatalf("%q: wait for the end of the turn: %v (status %s)", text, err, c.Status())
	}
}

// TestE2EWasmClientUnderConnectionCuts runs streamed answers, tool loops,
// approvals and questions against the real server while a chaos goroutine
// cuts the WebSocket at random moments and twice kills the wasm instance.
// The client must end with the server's digest, having never shown a text
// that is not a prefix of its final text.
func TestE2EWasmClientUnderConnectionCuts(t *testing.T) {
	srv := startServer(t, model.Speed{Delta: 300 * time.Microsecond, Tool: 3 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	apiClient := &API{BaseURL: srv.URL}
	sess, err := apiClient.CreateSession(ctx, "")
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	core, err := core.NewWasmCore(ctx, testRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, PageLimit: 200, Core: core})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	watch := newPrefixWatch()
	defer c.Subscribe(watch.observe)()

	// Chaos: cut the connection every few milliseconds, at random.
	var cuts atomic.Int64
	chaosCtx, stopChaos := context.WithCancel(ctx)
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-chaosCtx.Done():
				return
			case <-time.After(time.Duration(5+rng.IntN(60)) * time.Millisecond):
			}
			if c.cutConnection(chaosCtx) == nil {
				cuts.Add(1)
			}
		}
	}()

	turns := []struct {
		text   string
		answer *InteractionResponse
	}{
		{"scenario:text chars=3000 delta=7", nil},
		{"scenario:tools city=Paris", nil},
		{"scenario:approval to=a@example.com", ptr(Approval(true))},
		{"scenario:reasoning chars=1500 delta=5", nil},
		{"scenario:approval to=b@example.com", ptr(Approval(false))},
		{"scenario:question", ptr(Reply("blue"))},
		{"scenario:error chars=800", nil},
		{"scenario:long chars=20000 delta=16", nil},
		{"scenario:data", nil},
		{"hello there, echo me", nil},
	}
	for i, turn := range turns {
		if i == 3 || i == 7 {
			// A "trap": the instance dies under the client, which rebuilds
			// it and resyncs from the snapshot.
			corehook.KillInstance(core)
		}
		runTurn(ctx, t, c, turn.text, turn.answer)
	}
	stopChaos()
	<-chaosDone

	// Converge: live, and the core's digest equals the server's.
	var clientDigest, serverDigest string
	for {
		var err error
		if serverDigest, err = srv.srv.Digest(ctx, sess.SessionID); err != nil {
			t.Fatalf("server digest: %v", err)
		}
		if clientDigest, err = c.Digest(ctx); err != nil {
			t.Fatalf("client digest: %v", err)
		}
		if clientDigest == serverDigest && c.Status() == synccore.StatusLive {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("digests never converged: client %s, server %s (status %s)", clientDigest, serverDigest, c.Status())
		case <-time.After(20 * time.Millisecond):
		}
	}
	page, err := c.Messages(ctx, 200, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.View().Messages.Len(), len(page.Items); got != want {
		t.Errorf("view holds %d messages, server %d", got, want)
	}
	if got := wire.DigestMessages(page.Items); got != serverDigest {
		t.Errorf("digest of the page read over HTTP %s, server's %s", got, serverDigest)
	}
	watch.checkFinal(t, page.Items)
	epoch, err := c.epochForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Two rebuilds, each bumps the epoch twice, and no other: a core that
	// broke on its own (a trap, core_broken) is rebuilt too and would hide
	// behind the resync.
	if epoch != 4 {
		t.Errorf("core epoch %d, want 4: the killed instances were not rebuilt, or the core broke on its own", epoch)
	}
	if cuts.Load() < 10 {
		t.Errorf("only %d connection cuts: the chaos did not run", cuts.Load())
	}
	t.Logf("%d turns, %d cuts, %d views observed, %d messages, digest %s",
		len(turns), cuts.Load(), watch.views, len(page.Items), serverDigest[:12])
}

func ptr[T any](v T) *T { return &v }
