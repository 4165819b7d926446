package bindings

import (
	"context"
	"os"
	"testing"
)

// Test-only hooks into the Client and the WasmCore.

// cutConnection closes the current WebSocket's network connection without
// telling anyone, as a network failure would: the reader sees an error and
// the core hears connection_lost.
func (c *Client) cutConnection(ctx context.Context) error {
	return c.request(ctx, func() error {
		if s := c.loop.sub; s != nil {
			s.mu.Lock()
			if s.conn != nil {
				_ = s.conn.UnderlyingConn().Close()
			}
			s.mu.Unlock()
		}
		return nil
	})
}

// killInstance closes the wasm instance under the core's feet, so the next
// call fails as after a trap.
func (w *WasmCore) killInstance() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inst != nil {
		_ = w.inst.mod.Close(context.Background())
	}
}

// resets is how many times the client rebuilt its core.
func (c *Client) epochForTest(ctx context.Context) (uint64, error) {
	var e uint64
	err := c.request(ctx, func() error { e = c.loop.epoch; return nil })
	return e, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if rtShared != nil {
		_ = rtShared.Close(context.Background())
	}
	if rtCacheDir != "" {
		_ = os.RemoveAll(rtCacheDir)
	}
	os.Exit(code)
}
