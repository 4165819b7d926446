package core

import (
	"context"

	"github.com/agentsync/agentsync/bindings/internal/corehook"
)

// hooks.go fills bindings' test hooks (internal/corehook): a test of the
// Client breaks the wasm instance under it as a trap would.
func init() {
	corehook.KillInstance = func(c any) {
		w := c.(*WasmCore)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.inst != nil {
			_ = w.inst.mod.Close(context.Background())
		}
	}
	corehook.InstanceOf = func(c any) any {
		w := c.(*WasmCore)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.inst == nil {
			return nil
		}
		return w.inst
	}
}
