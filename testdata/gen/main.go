// Command gen writes the conformance traces of testdata/traces from the
// readable sources in this directory. Every expected command list and view
// is written by hand in the sources; gen runs each trace through the native
// client, refuses to write anything if the client disagrees, and only then
// fills in what is mechanical: the msgpack bytes of events and outputs (as
// base64) and the view digests.
//
//	go run ./testdata/gen            # regenerate testdata/traces/*.json
//	go run ./testdata/gen -check     # verify only, write nothing
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
	"github.com/agentsync/agentsync/testdata"
)

func main() {
	dir := flag.String("dir", "testdata/traces", "output directory")
	check := flag.Bool("check", false, "verify the sources against the client, write nothing")
	flag.Parse()
	all := allTraces()
	files := map[string][]byte{}
	failed := false
	for i, t := range all {
		f, err := build(t)
		if err != nil {
			slog.Error("trace disagrees with the client", "trace", t.name, "err", err)
			failed = true
			continue
		}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			slog.Error("marshal", "trace", t.name, "err", err)
			failed = true
			continue
		}
		files[fmt.Sprintf("%02d-%s.json", i+1, t.name)] = append(b, '\n')
	}
	if failed {
		os.Exit(1)
	}
	if *check {
		slog.Info("all traces agree", "traces", len(all))
		return
	}
	old, _ := filepath.Glob(filepath.Join(*dir, "*.json"))
	for _, p := range old {
		if _, keep := files[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				slog.Error("remove stale trace", "path", p, "err", err)
				os.Exit(1)
			}
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(*dir, name), b, 0o644); err != nil {
			slog.Error("write trace", "name", name, "err", err)
			os.Exit(1)
		}
	}
	slog.Info("traces written", "dir", *dir, "traces", len(files))
}

// readableEvent is the event as a reader sees it in the JSON file.
type readableEvent struct {
	synccore.Event
	Frames  []synccore.Frame      `json:"frames,omitempty"`
	PageObj *synccore.MessagePage `json:"page,omitempty"`
	DataB64 string                `json:"data_b64,omitempty"`
	Raw     string                `json:"raw_event,omitempty"`
}

// build runs one trace through a fresh client and returns its file.
func build(t trace) (*testdata.File, error) {
	c := synccore.NewClient(synccore.Options{})
	f := &testdata.File{Name: t.name, Description: t.desc}
	last := len(t.steps) - 1
	if t.steps[last].view == nil {
		return nil, fmt.Errorf("the last step must check the view")
	}
	for i, s := range t.steps {
		ev, readable := s.event()
		out := wire.HandleBytes(c, ev)
		got, err := wire.DecodeOutput(out)
		if err != nil {
			return nil, fmt.Errorf("step %d: output: %v", i+1, err)
		}
		want := synccore.Output{Commands: s.cmds}
		if want.Commands == nil {
			want.Commands = []synccore.Command{}
		}
		if len(got.Commands) == len(want.Commands) {
			for j := range want.Commands {
				if want.Commands[j].Reason == anyReason {
					want.Commands[j].Reason = got.Commands[j].Reason
				}
			}
		}
		if s.err != "" {
			if got.Error == nil || got.Error.Code != s.err {
				return nil, fmt.Errorf("step %d (%s): error %+v, want code %s", i+1, s.note, got.Error, s.err)
			}
			want.Error = &synccore.Error{Code: s.err, Message: got.Error.Message}
		}
		wantBytes := wire.EncodeOutput(want)
		if !bytes.Equal(out, wantBytes) {
			return nil, fmt.Errorf("step %d (%s):\n got  %s\n want %s", i+1, s.note, js(got), js(want))
		}
		st := testdata.FileStep{Note: s.note, Event: mustJSON(readable), EventB64: b64(ev),
			Expect: testdata.Expect{Commands: want.Commands, Error: s.err, OutputB64: b64(out)}}
		if s.view != nil {
			v := c.View()
			sum := testdata.Summarize(v)
			if !reflect.DeepEqual(sum, *s.view) {
				return nil, fmt.Errorf("step %d (%s): view\n got  %s\n want %s", i+1, s.note, js(sum), js(*s.view))
			}
			st.Expect.View, st.Expect.Digest = s.view, v.Digest
		}
		f.Steps = append(f.Steps, st)
	}
	return f, nil
}

// event encodes the step's event and its readable form.
func (s step) event() ([]byte, readableEvent) {
	ev := s.ev
	r := readableEvent{Event: ev}
	switch {
	case s.rawEvent != nil:
		r = readableEvent{Raw: s.note}
		return s.rawEvent, r
	case s.frames != nil:
		ev.Data = wire.EncodeFrames(s.frames)
		r.Frames = s.frames
	case s.page != nil:
		ev.Data = wire.EncodePage(*s.page)
		r.PageObj = s.page
	case s.rawData != nil:
		ev.Data = s.rawData
		r.DataB64 = b64(s.rawData)
	}
	return wire.EncodeEvent(ev), r
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return strings.ReplaceAll(string(b), `"`, `'`)
}
