package session

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/internal/fanout"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/server/store"
	"github.com/agentsync/agentsync/server/store/sqlite"
	"github.com/agentsync/agentsync/synccore"
)

// env is a Manager over a real SQLite file.
type env struct {
	t     testing.TB
	ctx   context.Context
	st    *sqlite.Store
	m     *Manager
	path  string
	gated *gated
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sqlite.Open(ctx, path, sqlite.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	e := &env{t: t, ctx: ctx, st: st, path: path}
	if cfg.Models == nil {
		e.gated = newGated()
		cfg.Models = model.Registry{model.DefaultName: scripted.Scripted{}, "gated": e.gated}
	}
	cfg.Store = st
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	m, err := NewManager(ctx, cfg)
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	e.m = m
	t.Cleanup(func() {
		_ = m.Shutdown(context.Background())
		_ = st.Close()
	})
	return e
}

func (e *env) session(modelName string) string {
	e.t.Helper()
	sess, err := e.m.CreateSession(e.ctx, modelName)
	if err != nil {
		e.t.Fatalf("create session: %v", err)
	}
	return sess.SessionID
}

func (e *env) post(sid, text string) synccore.Message {
	e.t.Helper()
	msg, err := e.m.PostMessage(e.ctx, sid, PostMessage{Parts: []synccore.Part{{Type: synccore.PartText, Text: text}}})
	if err != nil {
		e.t.Fatalf("post %q: %v", text, err)
	}
	return msg
}

// waitIdle waits until no turn runs.
func (e *env) waitIdle() {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for e.m.running.Load() != 0 {
		if time.Now().After(deadline) {
			e.t.Fatal("turns still running after 20s")
		}
		time.Sleep(time.Millisecond)
	}
}

// history is the committed snapshot, internal messages included.
func (e *env) history(sid string) []synccore.Message {
	e.t.Helper()
	h, err := e.st.History(e.ctx, sid)
	if err != nil {
		e.t.Fatalf("history: %v", err)
	}
	return h
}

func (e *env) lastAgent(sid string) synccore.Message {
	e.t.Helper()
	h := e.history(sid)
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role == synccore.RoleAgent {
			return h[i]
		}
	}
	e.t.Fatal("no agent message")
	return synccore.Message{}
}

// driver is a real synccore.Client fed by a real subscription and real
// pages, as a host would: the test's proof that what the engine streams
// converges on what it committed.
type driver struct {
	e      *env
	sid    string
	c      *synccore.Client
	sub    *fanout.Subscriber
	frames []synccore.Frame // every frame received, in order
	subs   int              // subscriptions opened
}

func (e *env) driver(sid string) *driver {
	e.t.Helper()
	d := &driver{e: e, sid: sid, c: synccore.NewClient(synccore.Options{})}
	d.handle(synccore.Event{Type: synccore.EvStart, SessionID: sid, PageLimit: 50})
	d.pumpUntil("the client to be live", func() bool { return d.c.Status() == synccore.StatusLive })
	return d
}

// drain delivers every frame still queued.
func (d *driver) drain() {
	for d.pumpOnce(50 * time.Millisecond) {
	}
}

func (d *driver) handle(ev synccore.Event) {
	t := d.e.t
	t.Helper()
	cmds, err := d.c.Handle(ev)
	if err != nil && cmds == nil {
		t.Fatalf("client rejected %s: %v", ev.Type, err)
	}
	if err != nil {
		t.Logf("client resynchronises after %s: %v", ev.Type, err)
	}
	for _, cmd := range cmds {
		switch cmd.Type {
		case synccore.CmdOpenSubscription:
			sub, err := d.e.m.Subscribe(d.e.ctx, cmd.SessionID)
			if err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			d.sub = sub
			d.subs++
			d.handle(synccore.Event{Type: synccore.EvSubscriptionOpened})
		case synccore.CmdCloseSubscription:
			if d.sub != nil {
				d.sub.Close()
				d.sub = nil
			}
		case synccore.CmdFetchPage:
			page, err := d.e.m.Messages(d.e.ctx, cmd.SessionID, store.PageQuery{
				Limit: cmd.Limit, BeforeSequence: cmd.BeforeSequence, IncludeInternal: cmd.IncludeInternal,
			})
			if err != nil {
				d.handle(synccore.Event{Type: synccore.EvPageFailed, RequestID: cmd.RequestID, Error: err.Error()})
				continue
			}
			d.handle(synccore.Event{Type: synccore.EvPage, RequestID: cmd.RequestID, Data: wire.EncodePage(page)})
		case synccore.CmdSetTimer:
			// Backoff: the test does not wait, it fires at once.
			d.handle(synccore.Event{Type: synccore.EvTimerFired, TimerID: cmd.TimerID})
		}
	}
}

// pumpOnce delivers what is queued (waiting up to wait for something).
func (d *driver) pumpOnce(wait time.Duration) bool {
	d.e.t.Helper()
	if d.sub == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(d.e.ctx, wait)
	defer cancel()
	frames, err := d.sub.Next(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return false
	case err != nil:
		d.sub = nil
		d.handle(synccore.Event{Type: synccore.EvConnectionLost, Error: err.Error(), Jitter: 500})
		return true
	}
	d.frames = append(d.frames, frames...)
	d.handle(synccore.Event{Type: synccore.EvFrames, Data: wire.EncodeFrames(frames)})
	return true
}

// pumpUntil delivers frames until cond holds.
func (d *driver) pumpUntil(what string, cond func() bool) {
	d.e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			d.e.t.Fatalf("timed out waiting for %s (client status %s)", what, d.c.Status())
		}
		d.pumpOnce(20 * time.Millisecond)
	}
}

// converge pumps until the session is idle and the client's view digest
// equals the server's snapshot digest.
func (d *driver) converge() {
	d.e.t.Helper()
	d.pumpUntil("the client to converge on the snapshot", func() bool {
		if d.e.m.running.Load() != 0 || d.c.Status() != synccore.StatusLive {
			return false
		}
		want, err := d.e.m.Digest(d.e.ctx, d.sid, false)
		if err != nil {
			d.e.t.Fatalf("digest: %v", err)
		}
		return d.c.Digest() == want
	})
}

// viewAgent is the last agent message of the client's view.
func (d *driver) viewAgent() (synccore.Message, bool) {
	v := d.c.View()
	for i := len(v.Messages) - 1; i >= 0; i-- {
		if v.Messages[i].Role == synccore.RoleAgent {
			return v.Messages[i], true
		}
	}
	return synccore.Message{}, false
}

// pending finds the pending interaction of the client's view.
func (d *driver) pending() (synccore.Part, bool) {
	m, ok := d.viewAgent()
	if !ok {
		return synccore.Part{}, false
	}
	for _, p := range m.Parts {
		if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending {
			return p, true
		}
	}
	return synccore.Part{}, false
}

// gated is a test model that streams text in bursts and waits for the
// test between them, so mid-stream moments are deterministic.
type gated struct {
	ready   chan int      // burst n has been emitted
	release chan struct{} // go on with the next burst
	bursts  int
	per     int
}

func newGated() *gated {
	return &gated{ready: make(chan int), release: make(chan struct{}), bursts: 3, per: 10}
}

// burstText is what burst b streams (per deltas of "b<n>é ").
func (g *gated) burstText(b int) string {
	s := ""
	for i := 0; i < g.per; i++ {
		s += burstDelta(b, i)
	}
	return s
}

func burstDelta(b, i int) string { return string(rune('a'+b)) + string(rune('0'+i%10)) + "é " }

func (g *gated) Stream(ctx context.Context, req model.Request, emit func(model.Event) error) error {
	if err := emit(model.Event{Type: model.EvTextStart, BlockID: "t"}); err != nil {
		return err
	}
	for b := 0; b < g.bursts; b++ {
		for i := 0; i < g.per; i++ {
			if err := emit(model.Event{Type: model.EvTextDelta, BlockID: "t", Delta: burstDelta(b, i)}); err != nil {
				return err
			}
		}
		select {
		case g.ready <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-g.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := emit(model.Event{Type: model.EvTextEnd, BlockID: "t"}); err != nil {
		return err
	}
	return emit(model.Event{Type: model.EvFinish, FinishReason: model.FinishStop})
}

// awaitBurst waits until the gated model has emitted burst b.
func (g *gated) awaitBurst(t *testing.T, b int) {
	t.Helper()
	select {
	case got := <-g.ready:
		if got != b {
			t.Fatalf("burst %d, want %d", got, b)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("gated model never reached burst %d", b)
	}
}

func (g *gated) fullText() string {
	s := ""
	for b := 0; b < g.bursts; b++ {
		s += g.burstText(b)
	}
	return s
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if !errors.Is(err, &synccore.Error{Code: code}) {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

func textOf(m synccore.Message, typ synccore.PartType) string {
	s := ""
	for _, p := range m.Parts {
		if p.Type == typ {
			s += p.Text
		}
	}
	return s
}

func partsOf(m synccore.Message, typ synccore.PartType) []synccore.Part {
	var out []synccore.Part
	for _, p := range m.Parts {
		if p.Type == typ {
			out = append(out, p)
		}
	}
	return out
}

func storeQuery(limit int, internal bool) store.PageQuery {
	return store.PageQuery{Limit: limit, IncludeInternal: internal}
}
