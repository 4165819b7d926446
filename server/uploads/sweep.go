package uploads

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Sweep drops the uploads in progress whose bytes have not grown for
// olderThan (abandoned by their client: a closed tab, a deleted session),
// and answers how many it dropped. An upload being written is never
// older than its last write, so a running PATCH is left alone.
func (h *Handler) Sweep(ctx context.Context, olderThan time.Duration) (int, error) {
	infos, err := filepath.Glob(filepath.Join(h.cfg.Dir, "*.info"))
	if err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-olderThan)
	dropped := 0
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return dropped, err
		}
		id := strings.TrimSuffix(filepath.Base(info), ".info")
		if !uploadID.MatchString(id) {
			continue
		}
		last, err := os.Stat(filepath.Join(h.cfg.Dir, id))
		if err != nil {
			last, err = os.Stat(info)
			if err != nil {
				continue
			}
		}
		if last.ModTime().After(cutoff) {
			continue
		}
		up, err := h.files.GetUpload(ctx, id)
		if err != nil {
			continue
		}
		if err := h.files.AsTerminatableUpload(up).Terminate(ctx); err != nil {
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
