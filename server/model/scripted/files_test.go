package scripted

import (
	"strings"
	"testing"

	"github.com/agentsync/agentsync/server/model"
)

// The write scenario calls write_file (text, or a PNG for a .png name),
// then reports the tool's output or its error.
func TestWriteScenarioSteps(t *testing.T) {
	evs, err := run(t, userMsg("scenario:write name=x.png"))
	if err != nil {
		t.Fatal(err)
	}
	var call model.Event
	for _, ev := range evs {
		if ev.Type == model.EvToolCall {
			call = ev
		}
	}
	in, _ := call.Input.(map[string]any)
	if call.ToolName != ToolWriteFile || in["name"] != "x.png" || in["media_type"] != "image/png" || in["content_base64"] == "" {
		t.Fatalf("call %+v", call)
	}
	result := func(state string, out any) model.InputMessage {
		return model.InputMessage{Role: model.RoleTool, Content: []model.InputContent{{Type: model.ContentToolResult, ToolCallID: call.ToolCallID, ToolState: state, Output: out}}}
	}
	evs, _ = run(t, userMsg("scenario:write name=x.png"), result("output-available", map[string]any{"filename": "x.png", "size": 99}))
	if got := textOf(evs, model.EvTextDelta); got != "I wrote x.png (99 bytes); it is attached." {
		t.Fatalf("after: %q", got)
	}
	evs, _ = run(t, userMsg("scenario:write"), result("output-error", map[string]any{"error": "boom"}))
	if got := textOf(evs, model.EvTextDelta); got != "Writing the file failed: boom." {
		t.Fatalf("after an error: %q", got)
	}
}

// The files scenario lists what the model received.
func TestFilesScenario(t *testing.T) {
	msg := userMsg("scenario:files")
	msg.Content = append(msg.Content,
		model.InputContent{Type: model.ContentFile, Filename: "a.png", MediaType: "image/png", Data: []byte("12345")},
		model.InputContent{Type: model.ContentFile, Filename: "b.png", MediaType: "image/png", URL: "https://x/b.png"},
		model.InputContent{Type: model.ContentText, Text: "<file name=\"c.md\" media_type=\"text/markdown\">\nhi\n</file>", Filename: "c.md", MediaType: "text/markdown"},
		model.InputContent{Type: model.ContentText, Text: "[The file d.pdf (application/pdf, 9 bytes) was left out: over.]", Filename: "d.pdf", MediaType: "application/pdf"},
	)
	evs, _ := run(t, msg)
	want := "I received 4 file(s):\n- a.png (image/png): 5 bytes\n- b.png (image/png): by URL only\n" +
		"- c.md (text/markdown): as text, 56 characters\n- [The file d.pdf (application/pdf, 9 bytes) was left out: over.]"
	if got := textOf(evs, model.EvTextDelta); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if evs, _ := run(t, userMsg("scenario:files")); !strings.Contains(textOf(evs, model.EvTextDelta), "no file") {
		t.Fatal("no files")
	}
	// A file's text is not the user's: the echo leaves it out.
	msg = userMsg("hello")
	msg.Content = append(msg.Content, model.InputContent{Type: model.ContentText, Text: "secret file text", Filename: "f.txt", MediaType: "text/plain"})
	if evs, _ := run(t, msg); strings.Contains(textOf(evs, model.EvTextDelta), "secret") || !strings.Contains(textOf(evs, model.EvTextDelta), "hello") {
		t.Fatalf("echo %q", textOf(evs, model.EvTextDelta))
	}
}
