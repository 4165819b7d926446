package bindings

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// The hand-made frames header must be the bytes msgpack/v5 writes, since
// the core's fast event decoder and the reflective one must both accept it.
func TestFramesEventHeaderMatchesMsgpack(t *testing.T) {
	for _, n := range []int{0, 1, 31, 255, 256, 65535, 65536, 1 << 20} {
		data := bytes.Repeat([]byte{0x93}, n)
		ev := synccore.Event{Type: synccore.EvFrames, Data: data}
		if !isPlainFrames(&ev) {
			t.Fatal("a frames event is not plain")
		}
		got := append(appendFramesEventHeader(nil, n), data...)
		want := encode(t, ev)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d bytes of data: header %x, msgpack %x", n, got[:min(len(got), 24)], want[:min(len(want), 24)])
		}
	}
	if ev := (synccore.Event{Type: synccore.EvFrames, Data: []byte{1}, Jitter: 3}); isPlainFrames(&ev) {
		t.Fatal("a frames event with a jitter is plain")
	}
}

// decodeOutput must decode what msgpack/v5 decodes, on every shape the
// core writes and on shapes it falls back for.
func TestDecodeOutputMatchesMsgpack(t *testing.T) {
	outputs := []synccore.Output{
		{Commands: []synccore.Command{}},
		{Commands: []synccore.Command{{Type: synccore.CmdRender, MessageIDs: []string{"m1", "m2"}}}},
		{Commands: []synccore.Command{
			{Type: synccore.CmdStatus, Status: synccore.StatusBackoff, Reason: "internal: gone"},
			{Type: synccore.CmdCloseSubscription, Reason: "gap"},
			{Type: synccore.CmdFetchPage, SessionID: "s1", RequestID: 1 << 40, Limit: 200, BeforeSequence: 70000, IncludeInternal: true},
			{Type: synccore.CmdSetTimer, TimerID: 300, DelayMs: 30000},
			{Type: synccore.CmdRender, Reset: true},
			{Type: synccore.CmdOpenSubscription, SessionID: "ses_" + string(bytes.Repeat([]byte("x"), 300))},
		}},
		{Commands: []synccore.Command{}, Error: &synccore.Error{Code: synccore.CodeMalformed, Message: "bad frame"}},
	}
	for i, o := range outputs {
		for _, b := range [][]byte{encode(t, o), synccore.EncodeOutput(o)} {
			var want, got synccore.Output
			if err := msgpack.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if err := decodeOutput(b, &got); err != nil {
				t.Fatalf("output %d: %v", i, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("output %d:\n got  %+v\n want %+v", i, got, want)
			}
			r := reader{b: b}
			var direct synccore.Output
			if err := r.output(&direct); err != nil || r.i != len(b) {
				t.Fatalf("output %d: the fast path fell back (%v)", i, err)
			}
		}
	}
	// An unknown key makes the fast path fall back, with the same result.
	type future struct {
		Commands []synccore.Command `msgpack:"commands"`
		Hint     string             `msgpack:"hint"`
	}
	b := encode(t, future{Commands: []synccore.Command{{Type: synccore.CmdRender, Reset: true}}, Hint: "x"})
	var got synccore.Output
	if err := decodeOutput(b, &got); err != nil || len(got.Commands) != 1 || !got.Commands[0].Reset {
		t.Fatalf("fallback: %+v (%v)", got, err)
	}
	// Truncated bytes are an error, never a panic.
	full := synccore.EncodeOutput(outputs[2])
	for n := range len(full) {
		var o synccore.Output
		if err := decodeOutput(full[:n], &o); err == nil {
			t.Fatalf("%d of %d bytes decoded", n, len(full))
		}
	}
}
