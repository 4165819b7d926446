package uploads

import (
	"context"
	"time"
)

// Sweep drops the uploads in progress whose bytes have not grown for
// olderThan (abandoned by their client: a closed tab, a deleted session),
// and answers how many it dropped. An upload being written is never
// older than its last write, so a running PATCH is left alone.
func (h *Handler) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	ids, err := h.store.Stale(ctx, olderThan)
	if err != nil {
		return 0, err
	}
	dropped := 0
	for _, id := range ids {
		up, err := h.store.GetUpload(ctx, id)
		if err != nil {
			continue
		}
		if err := h.store.AsTerminatableUpload(up).Terminate(ctx); err != nil {
			h.log.Warn("sweep an abandoned upload", "upload", id, "err", err)
			continue
		}
		dropped++
	}
	return dropped, nil
}

// SweepEvery runs Sweep(olderThan) every interval until ctx ends.
func (h *Handler) SweepEvery(ctx context.Context, interval, olderThan time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := h.Sweep(ctx, olderThan); err != nil && ctx.Err() == nil {
				h.log.Warn("sweep uploads", "err", err)
			} else if n > 0 {
				h.log.Info("swept abandoned uploads", "count", n)
			}
		}
	}
}
