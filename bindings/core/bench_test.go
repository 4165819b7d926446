package core

import (
	"bytes"
	"context"
	"testing"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

func encode(b testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func framesEvent(b testing.TB, frames ...synccore.Frame) synccore.Event {
	return synccore.Event{Type: synccore.EvFrames, Data: encode(b, frames)}
}

// benchApplyDelta feeds b.N one-frame WebSocket messages, each an 8-byte
// delta, to core: the per-mutation cost a host pays.
func benchApplyDelta(b *testing.B, core Core, size int) {
	target := liveView(b, core, size, 2)
	const seq = 2
	const delta = "bcdefghi"
	events := make([]synccore.Event, b.N)
	for i := range events {
		events[i] = framesEvent(b, synccore.Frame{Seq: seq + uint64(i), Kind: synccore.FrameDelta,
			MessageID: target, Revision: 1, PartID: "p1", Offset: int64(size + i*len(delta)), Text: delta})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range events {
		cmds, err := core.Handle(events[i])
		if err != nil {
			b.Fatal(err)
		}
		if len(cmds) != 1 || cmds[0].Type != synccore.CmdRender {
			b.Fatalf("delta %d: commands %+v, want one render", i, cmds)
		}
	}
	b.StopTimer()
	m, ok, err := core.Message(target)
	if err != nil || !ok || len(m.Parts[0].Text) != size+b.N*len(delta) {
		b.Fatalf("after %d deltas: ok %v err %v", b.N, ok, err)
	}
}

func BenchmarkApplyDelta(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1KB", 1 << 10}, {"10MB", 10 << 20}} {
		b.Run("wasm/"+size.name, func(b *testing.B) {
			core, err := NewWasmCore(context.Background(), testRuntime(b))
			if err != nil {
				b.Fatal(err)
			}
			defer core.Close()
			benchApplyDelta(b, core, size.n)
		})
		b.Run("native/"+size.name, func(b *testing.B) {
			core := NewNativeCore()
			defer core.Close()
			benchApplyDelta(b, core, size.n)
		})
	}
}

// BenchmarkStartWarmCache is a process's first start with the compilation
// cache already on disk: compile (from the cache) + the first instance.
func BenchmarkStartWarmCache(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	warm, err := NewRuntime(ctx, RuntimeConfig{CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	_ = warm.Close(ctx)
	b.ResetTimer()
	for range b.N {
		rt, err := NewRuntime(ctx, RuntimeConfig{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		core, err := NewWasmCore(ctx, rt)
		if err != nil {
			b.Fatal(err)
		}
		_ = core.Close()
		_ = rt.Close(ctx)
	}
}

// BenchmarkNewInstance is one more core in a running process.
func BenchmarkNewInstance(b *testing.B) {
	rt := testRuntime(b)
	b.ResetTimer()
	for range b.N {
		core, err := NewWasmCore(context.Background(), rt)
		if err != nil {
			b.Fatal(err)
		}
		_ = core.Close()
	}
}
