package synccore_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

// fuzz_test.go: no input may panic the decoders or the client, and every
// failure is a typed *synccore.Error with a known code. The seed corpus is
// every event of the conformance traces (plus the files under
// testdata/fuzz, if a fuzzing session found any), so `go test` replays
// them as regression tests.

var knownCodes = map[string]bool{
	synccore.CodeMalformed: true, synccore.CodeUnknownEvent: true, synccore.CodeUnknownFrame: true,
	synccore.CodeUnknownPartType: true, synccore.CodeInvalidPart: true, synccore.CodeInvalidMessage: true,
	synccore.CodeSequenceChanged: true, synccore.CodeRevisionBackward: true, synccore.CodeDoneIsFinal: true,
	synccore.CodeBadRequest: true, synccore.CodeTooLarge: true, synccore.CodeConflict: true,
	synccore.CodeClosed: true, synccore.CodeInternal: true,
}

func seedEvents(f *testing.F) [][]byte {
	traces, err := testdata.Traces()
	if err != nil {
		f.Fatal(err)
	}
	var evs [][]byte
	for _, tr := range traces {
		for _, s := range tr.Steps {
			evs = append(evs, s.Event)
		}
	}
	return evs
}

func FuzzDecodeFrames(f *testing.F) {
	for _, ev := range seedEvents(f) {
		if e, err := wire.DecodeEvent(ev); err == nil && e.Type == synccore.EvFrames {
			f.Add(e.Data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		frames, err := wire.DecodeFrames(data)
		if err != nil {
			var e *synccore.Error
			if !errors.As(err, &e) || e.Code != synccore.CodeMalformed {
				t.Fatalf("untyped or unexpected error: %v", err)
			}
			return
		}
		for i := range frames {
			if err := wire.ValidateFrame(&frames[i]); err != nil {
				var e *synccore.Error
				if !errors.As(err, &e) || !knownCodes[e.Code] {
					t.Fatalf("untyped error: %v", err)
				}
			}
		}
		// The same bytes through a live client: the hot path and the
		// generic path must both stay typed and panic-free.
		c := liveForFuzz(t)
		out, err := wire.DecodeOutput(wire.HandleBytes(c, wire.EncodeEvent(synccore.Event{Type: synccore.EvFrames, Data: data})))
		if err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		if out.Error != nil && !knownCodes[out.Error.Code] {
			t.Fatalf("unknown code %q", out.Error.Code)
		}
	})
}

// FuzzHandleBytes feeds a sequence of events: data is cut into chunks, each
// prefixed by a 2-byte length.
func FuzzHandleBytes(f *testing.F) {
	evs := seedEvents(f)
	for i := 0; i+3 <= len(evs); i += 3 {
		var seq []byte
		for _, ev := range evs[i : i+3] {
			seq = binary.BigEndian.AppendUint16(seq, uint16(len(ev)))
			seq = append(seq, ev...)
		}
		f.Add(seq)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := synccore.NewClient(synccore.Options{})
		for len(data) >= 2 {
			n := int(binary.BigEndian.Uint16(data))
			data = data[2:]
			n = min(n, len(data))
			ev := data[:n]
			data = data[n:]
			out, err := wire.DecodeOutput(wire.HandleBytes(c, ev))
			if err != nil {
				t.Fatalf("output does not decode: %v", err)
			}
			// core_broken (a recovered panic) is not among the known codes.
			if out.Error != nil && !knownCodes[out.Error.Code] {
				t.Fatalf("bad error: %+v", out.Error)
			}
			_ = wire.ViewBytes(c)
			_ = c.Digest()
		}
	})
}

func liveForFuzz(t *testing.T) *synccore.Client {
	c := synccore.NewClient(synccore.Options{})
	steps := [][]synccore.Frame{{{Seq: 1, Kind: synccore.FrameHello, Protocol: 1, SessionID: "s1"}}}
	if _, err := c.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Handle(synccore.Event{Type: synccore.EvFrames, Data: wire.EncodeFrames(steps[0])}); err != nil {
		t.Fatal(err)
	}
	m := synccore.Message{MessageID: "m1", SessionID: "s1", Sequence: 1, Revision: 1, Role: synccore.RoleAgent,
		State: synccore.MessageStreaming, Visibility: synccore.VisibilityVisible,
		Parts: []synccore.Part{{PartID: "p1", Sequence: 1, Type: synccore.PartText, State: synccore.StateStreaming, Text: "ab"}}}
	p := synccore.MessagePage{Items: []synccore.Message{m}, Total: 1}
	if _, err := c.Handle(synccore.Event{Type: synccore.EvPage, RequestID: 1, Data: wire.EncodePage(p)}); err != nil {
		t.Fatal(err)
	}
	return c
}
