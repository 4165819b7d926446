package bindings

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/bindings/internal/corehook"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// faultCore is a core.WasmCore whose next frames event can be replaced by a
// server error frame (code internal) at the seq the core expects next.
type faultCore struct {
	*core.WasmCore
	mu       sync.Mutex
	armed    bool
	injected chan error // the core's answer to the injected frame
}

func (f *faultCore) Handle(ev synccore.Event) ([]synccore.Command, error) {
	ev, inject := f.inject(ev)
	cmds, err := f.WasmCore.Handle(ev)
	if inject {
		f.injected <- err
	}
	return cmds, err
}

// HandleChanges is the Client's path for frames.
func (f *faultCore) HandleChanges(ev synccore.Event) ([]synccore.Command, *synccore.Changes, error) {
	ev, inject := f.inject(ev)
	cmds, ch, err := f.WasmCore.HandleChanges(ev)
	if inject {
		f.injected <- err
	}
	return cmds, ch, err
}

// inject replaces ev by the error frame if armed and ev carries frames.
func (f *faultCore) inject(ev synccore.Event) (synccore.Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed && ev.Type == synccore.EvFrames {
		if frames, err := wire.DecodeFrames(ev.Data); err == nil && len(frames) > 0 && frames[0].Seq > 1 {
			ev.Data = wire.EncodeFrames([]synccore.Frame{{
				Seq: frames[0].Seq, Kind: synccore.FrameError,
				Code: synccore.CodeInternal, Reason: "injected by the test",
			}})
			f.armed = false
			return ev, true
		}
	}
	return ev, false
}

// TestClientRebuildsOnlyOnCoreBroken: against the real server, a server
// error frame with code internal makes the Client resync with the same
// core instance; a trap makes it discard the instance and rebuild. Both
// end live with the server's digest.
func TestClientRebuildsOnlyOnCoreBroken(t *testing.T) {
	srv := startServer(t, model.Speed{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := core.NewWasmCore(ctx, testRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	fc := &faultCore{WasmCore: w, injected: make(chan error, 1)}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Core: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runTurn(ctx, t, c, "before", nil)

	converged := func(what string) {
		t.Helper()
		want, err := srv.srv.Digest(ctx, sess.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		for {
			got, err := c.Digest(ctx)
			if err == nil && got == want && c.Status() == synccore.StatusLive {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: never converged: digest %s (%v), server %s, status %s", what, got, err, want, c.Status())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	instance := func() any { return corehook.InstanceOf(w) }

	epoch0, err := c.epochForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inst0 := instance()
	fc.mu.Lock()
	fc.armed = true
	fc.mu.Unlock()
	runTurn(ctx, t, c, "scenario:text chars=300", nil)
	select {
	case err := <-fc.injected:
		wantCode(t, err, synccore.CodeInternal)
	case <-ctx.Done():
		t.Fatal("the error frame was never injected")
	}
	converged("after the server error frame")
	if epoch, _ := c.epochForTest(ctx); epoch != epoch0 {
		t.Fatalf("a server error frame with code internal rebuilt the core (epoch %d -> %d)", epoch0, epoch)
	}
	if instance() != inst0 {
		t.Fatal("a server error frame with code internal replaced the wasm instance")
	}

	corehook.KillInstance(w) // the next call traps
	runTurn(ctx, t, c, "after the trap", nil)
	converged("after the trap")
	if epoch, _ := c.epochForTest(ctx); epoch != epoch0+2 {
		t.Fatalf("after a trap: epoch %d, want %d (one rebuild)", epoch, epoch0+2)
	}
	if instance() == inst0 {
		t.Fatal("the trapped instance was kept")
	}
}
