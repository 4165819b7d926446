package core

import (
	"context"
	"testing"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

// TestChangesParityWasmNative feeds every conformance trace to both cores
// and takes their changes after each event: the WebAssembly module and the
// native core report the same changes, byte for byte.
func TestChangesParityWasmNative(t *testing.T) {
	ctx := context.Background()
	traces, err := testdata.Traces()
	if err != nil || len(traces) == 0 {
		t.Fatalf("traces: %d, %v", len(traces), err)
	}
	for _, tr := range traces {
		w, err := NewWasmCore(ctx, testRuntime(t))
		if err != nil {
			t.Fatal(err)
		}
		n := synccore.NewClient(synccore.Options{})
		for i, s := range tr.Steps {
			if _, err := w.handleRaw(s.Event); err != nil {
				t.Fatalf("%s step %d: %v", tr.Name, i+1, err)
			}
			wire.HandleBytes(n, s.Event)
			wc, err1 := w.Changes()
			nc, err2 := n.TakeChanges(), error(nil)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s step %d: changes: wasm %v, native %v", tr.Name, i+1, err1, err2)
			}
			if a, b := wire.EncodeChanges(wc), wire.EncodeChanges(nc); string(a) != string(b) {
				t.Fatalf("%s step %d: changes differ\nwasm   %+v\nnative %+v", tr.Name, i+1, wc, nc)
			}
		}
		_ = w.Close()
	}
}
