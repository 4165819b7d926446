package synccore_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

// TestConformance runs every trace of testdata/traces through HandleBytes:
// the Output must be byte-identical to the expected one and the view must
// match its readable summary and digest. The WebAssembly hosts run the same
// files.
func TestConformance(t *testing.T) {
	traces, err := testdata.Traces()
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) < 40 {
		t.Fatalf("only %d traces", len(traces))
	}
	for _, tr := range traces {
		t.Run(tr.Name, func(t *testing.T) {
			c := synccore.NewClient(synccore.Options{})
			for i, s := range tr.Steps {
				out := wire.HandleBytes(c, s.Event)
				if !bytes.Equal(out, s.Output) {
					got, _ := wire.DecodeOutput(out)
					t.Fatalf("step %d (%s): output\n got  %+v\n want %+v", i+1, s.Note, got, s.Commands)
				}
				if s.Digest == "" {
					continue
				}
				v := c.View()
				if v.Digest != s.Digest || c.Digest() != s.Digest {
					t.Fatalf("step %d (%s): digest %s, want %s", i+1, s.Note, v.Digest, s.Digest)
				}
				if sum := testdata.Summarize(v); !reflect.DeepEqual(sum, *s.View) {
					t.Fatalf("step %d (%s): view\n got  %+v\n want %+v", i+1, s.Note, sum, *s.View)
				}
				// The view's bytes decode to the same view.
				back, err := wire.DecodeView(wire.ViewBytes(c))
				if err != nil || back.Digest != s.Digest || wire.DigestMessages(back.Messages) != s.Digest {
					t.Fatalf("step %d (%s): view bytes do not round-trip: %v", i+1, s.Note, err)
				}
			}
		})
	}
}

// TestConformanceNative runs the traces through the native Handle with the
// decoded event: the same commands as HandleBytes.
func TestConformanceNative(t *testing.T) {
	traces, err := testdata.Traces()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		t.Run(tr.Name, func(t *testing.T) {
			c := synccore.NewClient(synccore.Options{})
			for i, s := range tr.Steps {
				ev, err := wire.DecodeEvent(s.Event)
				if err != nil {
					if s.ErrorCode != synccore.CodeMalformed {
						t.Fatalf("step %d: %v", i+1, err)
					}
					continue
				}
				cmds, herr := c.Handle(ev)
				code := ""
				if herr != nil {
					code = herr.(*synccore.Error).Code
				}
				if code != s.ErrorCode {
					t.Fatalf("step %d (%s): error %v, want %q", i+1, s.Note, herr, s.ErrorCode)
				}
				out := wire.EncodeOutput(synccore.Output{Commands: orEmpty(cmds), Error: asErr(herr)})
				if !bytes.Equal(out, s.Output) {
					t.Fatalf("step %d (%s): commands %+v, want %+v", i+1, s.Note, cmds, s.Commands)
				}
				if s.Digest != "" && c.Digest() != s.Digest {
					t.Fatalf("step %d (%s): digest mismatch", i+1, s.Note)
				}
			}
		})
	}
}

func orEmpty(c []synccore.Command) []synccore.Command {
	if c == nil {
		return []synccore.Command{}
	}
	return c
}

func asErr(err error) *synccore.Error {
	if err == nil {
		return nil
	}
	return err.(*synccore.Error)
}
