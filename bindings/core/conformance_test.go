package core

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

// TestConformanceWasm runs every trace of testdata through the module under
// wazero, a fresh instance per trace, beside the native core: at every step
// the Output bytes are identical to the trace's and to the native core's,
// and where the trace checks the view, the digest and the readable view
// match, through both the byte ABI and the typed Core API.
func TestConformanceWasm(t *testing.T) {
	traces, err := testdata.Traces()
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) == 0 {
		t.Fatal("no traces")
	}
	rt := testRuntime(t)
	for _, tr := range traces {
		t.Run(tr.Name, func(t *testing.T) {
			w, err := NewWasmCore(context.Background(), rt)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			native := synccore.NewClient(synccore.Options{})
			for i, s := range tr.Steps {
				got, err := w.handleRaw(s.Event)
				if err != nil {
					t.Fatalf("step %d (%s): %v", i+1, s.Note, err)
				}
				if want := wire.HandleBytes(native, s.Event); !bytes.Equal(got, want) {
					t.Fatalf("step %d (%s): wasm output differs from native:\n wasm   %x\n native %x", i+1, s.Note, got, want)
				}
				if !bytes.Equal(got, s.Output) {
					gotOut, _ := wire.DecodeOutput(got)
					t.Fatalf("step %d (%s): output\n got  %+v\n want %+v", i+1, s.Note, gotOut, s.Commands)
				}
				if s.Digest == "" {
					continue
				}
				d, err := w.Digest()
				if err != nil {
					t.Fatalf("step %d: digest: %v", i+1, err)
				}
				if d != s.Digest || d != native.Digest() {
					t.Fatalf("step %d (%s): digest %s, want %s (native %s)", i+1, s.Note, d, s.Digest, native.Digest())
				}
				v, err := w.View()
				if err != nil {
					t.Fatalf("step %d: view: %v", i+1, err)
				}
				if v.Digest != s.Digest {
					t.Fatalf("step %d (%s): view digest %s, want %s", i+1, s.Note, v.Digest, s.Digest)
				}
				if sum := testdata.Summarize(v); !reflect.DeepEqual(sum, *s.View) {
					t.Fatalf("step %d (%s): view\n got  %+v\n want %+v", i+1, s.Note, sum, *s.View)
				}
				// Every message of the view reads back alone, identical.
				for _, m := range v.Messages {
					one, ok, err := w.Message(m.MessageID)
					if err != nil || !ok || wire.DigestMessages([]synccore.Message{one}) != wire.DigestMessages([]synccore.Message{m}) {
						t.Fatalf("step %d: message %s: ok %v err %v", i+1, m.MessageID, ok, err)
					}
				}
			}
		})
	}
}

// TestConformanceWasmTypedAPI replays the traces through the typed Core API
// (events decoded, then re-encoded by the host): the commands must equal
// the trace's, on the wasm core and the native core alike.
func TestConformanceWasmTypedAPI(t *testing.T) {
	traces, err := testdata.Traces()
	if err != nil {
		t.Fatal(err)
	}
	rt := testRuntime(t)
	for _, tr := range traces {
		t.Run(tr.Name, func(t *testing.T) {
			w, err := NewWasmCore(context.Background(), rt)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			n := NewNativeCore()
			defer n.Close()
			for i, s := range tr.Steps {
				ev, err := wire.DecodeEvent(s.Event)
				if err != nil {
					// A malformed event has no typed form; the byte test covers it.
					continue
				}
				for name, core := range map[string]Core{"wasm": w, "native": n} {
					cmds, err := core.Handle(ev)
					code := ""
					if e, ok := err.(*synccore.Error); ok {
						code = e.Code
					} else if err != nil {
						t.Fatalf("%s step %d: untyped error %v", name, i+1, err)
					}
					if code != s.ErrorCode {
						t.Fatalf("%s step %d (%s): error %v, want code %q", name, i+1, s.Note, err, s.ErrorCode)
					}
					if len(cmds) == 0 && len(s.Commands) == 0 {
						continue
					}
					if !reflect.DeepEqual(cmds, s.Commands) {
						t.Fatalf("%s step %d (%s): commands\n got  %+v\n want %+v", name, i+1, s.Note, cmds, s.Commands)
					}
				}
				if s.Digest != "" {
					wd, _ := w.Digest()
					nd, _ := n.Digest()
					if wd != s.Digest || nd != s.Digest {
						t.Fatalf("step %d: digests wasm %s native %s, want %s", i+1, wd, nd, s.Digest)
					}
				}
			}
		})
	}
}
