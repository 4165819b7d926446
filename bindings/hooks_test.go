package bindings

import (
	"context"
)

// Test-only hooks into the Client and the core.WasmCore.

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

// resets is how many times the client rebuilt its core.
func (c *Client) epochForTest(ctx context.Context) (uint64, error) {
	var e uint64
	err := c.request(ctx, func() error { e = c.loop.epoch; return nil })
	return e, err
}
