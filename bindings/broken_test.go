package bindings

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

// serverErrorTrace returns conformance trace 27: a subscription that ends
// with a server error frame of code internal.
func serverErrorTrace(t *testing.T) testdata.Trace {
	t.Helper()
	traces, err := testdata.Traces()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		if tr.Name == "server-error-frame" {
			return tr
		}
	}
	t.Fatal("trace server-error-frame not found")
	return testdata.Trace{}
}

// TestCoresTellServerInternalFromBroken: on both cores, a server error
// frame with code internal is reported as internal and leaves the core in
// use; a forced panic (native) or a trap (wasm) answers core_broken, on
// that call and every later one, until Reset.
func TestCoresTellServerInternalFromBroken(t *testing.T) {
	ctx := context.Background()
	tr := serverErrorTrace(t)
	w, err := NewWasmCore(ctx, testRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	n := NewNativeCore()
	defer n.Close()
	cores := []struct {
		name string
		core interface {
			Core
			Resetter
		}
		breakIt func()
	}{
		{"wasm", w, w.killInstance},
		{"native", n, func() { n.testPanic = func(op string) { panic("forced in " + op) } }},
	}
	for _, c := range cores {
		sawInternal := false
		for i, s := range tr.Steps {
			ev, err := wire.DecodeEvent(s.Event)
			if err != nil {
				t.Fatalf("%s step %d: decode: %v", c.name, i+1, err)
			}
			cmds, err := c.core.Handle(ev)
			if s.ErrorCode == "" {
				if err != nil {
					t.Fatalf("%s step %d (%s): %v", c.name, i+1, s.Note, err)
				}
				continue
			}
			wantCode(t, err, s.ErrorCode)
			if s.ErrorCode == synccore.CodeInternal {
				sawInternal = true
				if errors.Is(err, ErrBroken) || isBroken(err) {
					t.Fatalf("%s: the server's internal error %v marks the core broken", c.name, err)
				}
				if len(cmds) == 0 {
					t.Fatalf("%s: the error frame asked for no resync", c.name)
				}
			}
		}
		if !sawInternal {
			t.Fatal("trace 27 has no internal error step")
		}
		if _, err := c.core.Digest(); err != nil {
			t.Fatalf("%s: digest after the server's internal error: %v", c.name, err)
		}
		if w.inst == nil {
			t.Fatal("wasm: the instance was discarded after a server error frame")
		}

		c.breakIt()
		_, err := c.core.Handle(synccore.Event{Type: synccore.EvTimerFired, TimerID: 1})
		wantCode(t, err, synccore.CodeCoreBroken)
		if !errors.Is(err, ErrBroken) {
			t.Fatalf("%s: core_broken error %v does not match ErrBroken", c.name, err)
		}
		if c.name == "native" {
			n.testPanic = nil // the core stays broken without another panic
		}
		_, err = c.core.View()
		wantCode(t, err, synccore.CodeCoreBroken)
		if err := c.core.Reset(ctx); err != nil {
			t.Fatalf("%s: reset: %v", c.name, err)
		}
		if _, err := c.core.Digest(); err != nil {
			t.Fatalf("%s: digest after reset: %v", c.name, err)
		}
	}
}

// faultCore is a WasmCore whose next frames event can be replaced by a
// server error frame (code internal) at the seq the core expects next.
type faultCore struct {
	*WasmCore
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := &API{BaseURL: srv.URL}
	sess, err := a.CreateSession(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWasmCore(ctx, testRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	core := &faultCore{WasmCore: w, injected: make(chan error, 1)}
	c, err := Dial(ctx, Config{BaseURL: srv.URL, SessionID: sess.SessionID, Core: core})
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
	instance := func() *instance {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.inst
	}

	epoch0, err := c.epochForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inst0 := instance()
	core.mu.Lock()
	core.armed = true
	core.mu.Unlock()
	runTurn(ctx, t, c, "scenario:text chars=300", nil)
	select {
	case err := <-core.injected:
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

	core.killInstance() // the next call traps
	runTurn(ctx, t, c, "after the trap", nil)
	converged("after the trap")
	if epoch, _ := c.epochForTest(ctx); epoch != epoch0+2 {
		t.Fatalf("after a trap: epoch %d, want %d (one rebuild)", epoch, epoch0+2)
	}
	if instance() == inst0 {
		t.Fatal("the trapped instance was kept")
	}
}
