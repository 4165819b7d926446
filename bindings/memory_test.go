package bindings

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// TestFollowLongAnswerInBoundedMemory follows a 1,000,000-character answer,
// about one delta per WebSocket message, with the WebAssembly core in a
// process of its own (tools/follow), and holds its peak RSS and the
// module's linear memory to bounds. Before the incremental render and the
// module's own collections the same run needed gigabytes (docs/benchmarks.md).
func TestFollowLongAnswerInBoundedMemory(t *testing.T) {
	const (
		chars     = 1_000_000
		maxRSS    = 512 << 20 // ~50-80 MB on a quiet machine, up to ~330 MB seen on a loaded one; the old host took 15 GB
		maxModule = 40 << 20
	)
	bin := filepath.Join(t.TempDir(), "follow")
	build := exec.Command("go", "build", "-o", bin, "../tools/follow")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build tools/follow: %v\n%s", err, out)
	}
	srv := startServer(t, model.Paced(time.Microsecond))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-url", srv.URL, "-chars", "1000000", "-core", "wasm").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("follow: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("follow: %v", err)
	}
	var res struct {
		Chars        int     `json:"chars"`
		DeltasPerSec float64 `json:"deltas_per_sec"`
		MaxRSSBytes  int64   `json:"max_rss_bytes"`
		ModuleBytes  uint64  `json:"module_bytes"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("follow printed %q: %v", out, err)
	}
	t.Logf("1,000,000 characters: %.0f deltas/s, peak RSS %d MB, module memory %d MB", res.DeltasPerSec, res.MaxRSSBytes>>20, res.ModuleBytes>>20)
	if res.Chars != chars || res.ModuleBytes == 0 {
		t.Fatalf("follow reported %+v", res)
	}
	if res.MaxRSSBytes > maxRSS {
		t.Errorf("peak RSS %d MB, bound %d MB", res.MaxRSSBytes>>20, maxRSS>>20)
	}
	if res.ModuleBytes > maxModule {
		t.Errorf("module memory %d MB, bound %d MB", res.ModuleBytes>>20, maxModule>>20)
	}
}

// TestMemoryLimitIsTypedAndResetRecovers gives a module a 16 MiB limit and
// a snapshot holding 24 MB of text: the core fails with an error matching
// both core.ErrMemoryLimit and core.ErrBroken, and Reset brings a working core back.
func TestMemoryLimitIsTypedAndResetRecovers(t *testing.T) {
	ctx := context.Background()
	testRuntime(t) // makes the shared compilation cache directory
	rt, err := core.NewRuntime(ctx, core.RuntimeConfig{CacheDir: rtCacheDir, MemoryLimitPages: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	w, err := core.NewWasmCore(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	snapshot := func(text string) error {
		if _, err := w.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "s1"}); err != nil {
			return err
		}
		if _, err := w.Handle(synccore.Event{Type: synccore.EvSubscriptionOpened}); err != nil {
			return err
		}
		cmds, err := w.Handle(framesEvent(t, synccore.Frame{Seq: 1, Kind: synccore.FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: 1}))
		if err != nil {
			return err
		}
		var req uint64
		for _, c := range cmds {
			if c.Type == synccore.CmdFetchPage {
				req = c.RequestID
			}
		}
		page := synccore.MessagePage{Total: 1, StartSequence: 1, EndSequence: 1, Items: []synccore.Message{{
			MessageID: "m1", SessionID: "s1", Sequence: 1, Revision: 1, Role: synccore.RoleUser,
			Visibility: synccore.VisibilityVisible, CreatedAt: 1,
			Parts: []synccore.Part{{PartID: "p1", Sequence: 1, Type: synccore.PartText, Text: text}}}}}
		_, err = w.Handle(synccore.Event{Type: synccore.EvPage, RequestID: req, Data: encode(t, page)})
		return err
	}
	err = snapshot(strings.Repeat("x", 24<<20))
	if !errors.Is(err, core.ErrMemoryLimit) || !errors.Is(err, core.ErrBroken) {
		t.Fatalf("24 MB of text in a 16 MiB module: %v, want core.ErrMemoryLimit and core.ErrBroken", err)
	}
	if err := w.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := snapshot("small"); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
	v, err := w.View()
	if err != nil || len(v.Messages) != 1 || v.Messages[0].Parts[0].Text != "small" {
		t.Fatalf("after Reset: view %+v, %v", v, err)
	}
}
