package core

import (
	"context"
	"errors"
	"testing"

	"github.com/agentsync/agentsync/bindings/internal/corehook"
	"github.com/agentsync/agentsync/internal/wire"
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

// killInstance closes the wasm instance under the core's feet, so the next
// call fails as after a trap.
func (w *WasmCore) killInstance() { corehook.KillInstance(w) }
