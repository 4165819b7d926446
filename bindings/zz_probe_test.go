package bindings

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/synccore"
	"github.com/tetratelabs/wazero/api"
)

func BenchmarkProbeRaw(b *testing.B) {
	for _, size := range []int{1 << 10, 10 << 20} {
		b.Run("", func(b *testing.B) {
			core, err := NewWasmCore(context.Background(), testRuntime(b))
			if err != nil {
				b.Fatal(err)
			}
			defer core.Close()
			seq := benchCore(b, core, size)
			const delta = "bcdefghi"
			evs := make([][]byte, b.N)
			for i := range evs {
				ev := framesEvent(b, synccore.Frame{Seq: seq + uint64(i), Kind: synccore.FrameDelta,
					MessageID: "m2", Revision: 1, PartID: "p1", Offset: int64(size + i*len(delta)), Text: delta})
				evs[i] = encode(b, ev)
			}
			ctx := context.Background()
			before := core.inst.mem.Size()
			defer func() { b.Logf("N=%d mem %d -> %d", b.N, before, core.inst.mem.Size()) }()
			b.ResetTimer()
			for i := range evs {
				ptr, err := core.inst.write(ctx, evs[i])
				if err != nil {
					b.Fatal(err)
				}
				res, err := core.inst.call(ctx, core.inst.handle, api.EncodeI32(core.h), api.EncodeU32(ptr), api.EncodeI32(int32(len(evs[i]))))
				if err != nil {
					b.Fatal(err)
				}
				_ = res
			}
		})
	}
}

func BenchmarkProbeNativeBytes(b *testing.B) {
	for _, size := range []int{1 << 10, 10 << 20} {
		b.Run("", func(b *testing.B) {
			core := NewNativeCore()
			seq := benchCore(b, core, size)
			const delta = "bcdefghi"
			evs := make([][]byte, b.N)
			for i := range evs {
				ev := framesEvent(b, synccore.Frame{Seq: seq + uint64(i), Kind: synccore.FrameDelta,
					MessageID: "m2", Revision: 1, PartID: "p1", Offset: int64(size + i*len(delta)), Text: delta})
				evs[i] = encode(b, ev)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range evs {
				_ = core.c.HandleBytes(evs[i])
			}
		})
	}
}
