// Package testdata holds the conformance traces every host of the client
// core runs: natively (synccore), under wazero (bindings), in Node and in
// Chromium (js). Each trace is a list of events as msgpack bytes, each with
// the exact Output the core must answer and, at chosen steps, the view it
// must hold. See README.md for the file format; `go run ./testdata/gen`
// regenerates traces/*.json from the readable sources in gen/.
package testdata

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"

	"github.com/agentsync/agentsync/synccore"
)

//go:embed traces/*.json
var files embed.FS

// File is the JSON shape of one trace file.
type File struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Steps       []FileStep `json:"steps"`
}

// FileStep is one step of a trace file.
type FileStep struct {
	Note string `json:"note,omitempty"`
	// Event is the readable form of the event (frames and pages as objects);
	// EventB64 is what a host feeds to handle, base64 of the msgpack Event.
	Event    json.RawMessage `json:"event"`
	EventB64 string          `json:"event_b64"`
	Expect   Expect          `json:"expect"`
}

// Expect is what the core must answer to a step.
type Expect struct {
	// Commands in order, readable; OutputB64 is the exact msgpack Output.
	Commands  []synccore.Command `json:"commands"`
	Error     string             `json:"error,omitempty"` // the Output's error code, if any
	OutputB64 string             `json:"output_b64"`
	// View, when present, is the view after the step in readable form, and
	// Digest its exact digest (View.Digest, wire.DigestMessages).
	View   *ViewSummary `json:"view,omitempty"`
	Digest string       `json:"digest,omitempty"`
}

// ViewSummary is the readable form of a view a trace expects.
type ViewSummary struct {
	Status       string           `json:"status"`
	Total        int64            `json:"total"`
	HasMoreOlder bool             `json:"has_more_older"`
	LoadingOlder bool             `json:"loading_older"`
	Messages     []MessageSummary `json:"messages"`
}

// MessageSummary is one message of a ViewSummary.
type MessageSummary struct {
	ID       string        `json:"id"`
	Sequence int64         `json:"sequence"`
	Revision int64         `json:"revision"`
	Role     string        `json:"role"`
	State    string        `json:"state,omitempty"`
	Parts    []PartSummary `json:"parts"`
}

// PartSummary is one part: its state (or an interaction's status), its
// text for text and reasoning, and for other types one telling field
// (tool name, action type, error code, interaction id, url, data type, tag).
type PartSummary struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	State  string `json:"state,omitempty"`
	Text   string `json:"text,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Trace is a decoded trace, ready to run.
type Trace struct {
	Name        string
	Description string
	Steps       []Step
}

// Step is one event and what the core must answer.
type Step struct {
	Note      string
	Event     []byte             // msgpack Event for HandleBytes
	Output    []byte             // the exact msgpack Output expected
	Commands  []synccore.Command // the same commands, decoded
	ErrorCode string             // the Output's error code, "" if none
	View      *ViewSummary       // nil when this step does not check the view
	Digest    string             // "" when this step does not check the view
}

// Traces decodes every embedded trace, in file name order.
func Traces() ([]Trace, error) {
	names, err := fs.Glob(files, "traces/*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Trace
	for _, name := range names {
		raw, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var f File
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("trace %s: %w", name, err)
		}
		t := Trace{Name: f.Name, Description: f.Description}
		for i, s := range f.Steps {
			ev, err := base64.StdEncoding.DecodeString(s.EventB64)
			if err != nil {
				return nil, fmt.Errorf("trace %s step %d: event_b64: %w", name, i+1, err)
			}
			o, err := base64.StdEncoding.DecodeString(s.Expect.OutputB64)
			if err != nil {
				return nil, fmt.Errorf("trace %s step %d: output_b64: %w", name, i+1, err)
			}
			t.Steps = append(t.Steps, Step{Note: s.Note, Event: ev, Output: o, Commands: s.Expect.Commands,
				ErrorCode: s.Expect.Error, View: s.Expect.View, Digest: s.Expect.Digest})
		}
		out = append(out, t)
	}
	return out, nil
}

// Summarize turns a view into its readable summary.
func Summarize(v synccore.View) ViewSummary {
	s := ViewSummary{Status: v.Status, Total: v.Total, HasMoreOlder: v.HasMoreOlder,
		LoadingOlder: v.LoadingOlder, Messages: []MessageSummary{}}
	for _, m := range v.Messages {
		ms := MessageSummary{ID: m.MessageID, Sequence: m.Sequence, Revision: m.Revision,
			Role: string(m.Role), State: string(m.State), Parts: []PartSummary{}}
		for _, p := range m.Parts {
			ps := PartSummary{ID: p.PartID, Type: string(p.Type), State: string(p.State)}
			switch p.Type {
			case synccore.PartText, synccore.PartReasoning:
				ps.Text = p.Text
			case synccore.PartTool:
				ps.Detail = p.ToolName
			case synccore.PartAction:
				ps.Detail = p.ActionType
			case synccore.PartError:
				ps.Detail = p.Code
			case synccore.PartInteraction:
				ps.State, ps.Detail = p.Status, p.InteractionID
			case synccore.PartFile:
				ps.Detail = p.URL
			case synccore.PartData:
				ps.Detail = p.DataType
			case synccore.PartContext:
				ps.Detail = p.Tag
			}
			ms.Parts = append(ms.Parts, ps)
		}
		s.Messages = append(s.Messages, ms)
	}
	return s
}
