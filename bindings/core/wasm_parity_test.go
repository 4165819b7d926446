package core_test

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// wasm_parity_test.go: the WebAssembly module is built without fmt,
// reflect, time and crypto/sha256 (format_wasm.go, reflect_wasm.go,
// time_wasm.go, digest_wasm.go). Values that take those paths — timestamps
// of every width, the zero time, odd numbers, bytes, nested maps — must
// give the module the same view and digest as the native core.
func TestWasmParityOddValues(t *testing.T) {
	ctx := context.Background()
	rt, err := core.NewRuntime(ctx, core.RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	wasm, err := core.NewWasmCore(ctx, rt)
	if err != nil {
		t.Fatal(err)
	}
	defer wasm.Close()
	native := core.NewNativeCore()
	defer native.Close()

	values := map[string]any{
		"t32": time.Unix(1700000000, 0), "t64": time.Unix(1700000000, 123456789), "t96": time.Unix(-5, 7),
		"tbig": time.Unix(1<<40, 999999999), "zero": time.Time{}, "f32": float32(0.1), "f64": math.Pi,
		"nan": math.NaN(), "neg": int64(math.MinInt64), "u64": uint64(math.MaxUint64), "bin": []byte{0, 1},
		"nested": []any{map[string]any{"b": nil, "a": []any{}}, "", false},
	}
	page := synccore.MessagePage{Total: 1, StartSequence: 1, EndSequence: 1, Items: []synccore.Message{{
		MessageID: "m1", SessionID: "s1", Sequence: 1, Revision: 1, Role: synccore.RoleAgent, State: synccore.MessageDone,
		Visibility: synccore.VisibilityVisible, CreatedAt: 1,
		Parts: []synccore.Part{
			{PartID: "t", Sequence: 1, Type: synccore.PartTool, State: synccore.ToolOutputAvailable, ToolCallID: "c", ToolName: "n",
				Input: values, Output: time.Unix(3, 4)},
			{PartID: "d", Sequence: 2, Type: synccore.PartData, DataType: "x", Data: time.Time{}}, // empty: omitted
		},
	}}}
	var data []byte
	data, err = msgpack.Marshal(&page) // the server's encoder
	if err != nil {
		t.Fatal(err)
	}
	for _, core := range []core.Core{native, wasm} {
		steps := []synccore.Event{
			{Type: synccore.EvStart, SessionID: "s1"},
			{Type: synccore.EvFrames, Data: wire.EncodeFrames([]synccore.Frame{{Seq: 1, Kind: synccore.FrameHello, Protocol: 1, SessionID: "s1"}})},
			{Type: synccore.EvPage, RequestID: 1, Data: data},
		}
		for _, ev := range steps {
			if _, err := core.Handle(ev); err != nil {
				t.Fatalf("%T: %s: %v", core, ev.Type, err)
			}
		}
	}
	nv, err := native.View()
	if err != nil {
		t.Fatal(err)
	}
	wv, err := wasm.View()
	if err != nil {
		t.Fatal(err)
	}
	if nv.Digest != wv.Digest {
		t.Fatalf("digest: native %s, wasm %s", nv.Digest, wv.Digest)
	}
	// Compare through the wire form (NaN is not equal to itself).
	nb, wb := wire.EncodeView(nv), wire.EncodeView(wv)
	if !reflect.DeepEqual(nb, wb) {
		t.Fatalf("views differ:\nnative %x\nwasm   %x", nb, wb)
	}
	if len(wv.Messages) != 1 || len(wv.Messages[0].Parts) != 2 || wv.Messages[0].Parts[1].Data != nil {
		t.Fatalf("unexpected view: %+v", wv.Messages)
	}
}
