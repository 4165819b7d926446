package scripted

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"

	"github.com/agentsync/agentsync/server/model"
)

// ToolWriteFile is the built-in tool that writes a file (the server's,
// with a blob store: server/internal/filetool).
const ToolWriteFile = "write_file"

// writeScenario: a write_file call, then a sentence on how it went.
func writeScenario(ctx context.Context, emit func(model.Event) error, req model.Request, sc Scenario, results []model.InputContent) error {
	name := sc.Str("name", "notes.md")
	if len(results) == 0 {
		input := map[string]any{"name": name}
		if strings.HasSuffix(strings.ToLower(name), ".png") {
			input["media_type"] = "image/png"
			input["content_base64"] = base64.StdEncoding.EncodeToString(demoPNG())
		} else {
			input["content"] = "# Notes\n\nWritten by the scripted model with the write_file tool.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
		}
		return play(ctx, emit, textBlock("t", "Let me write "+name+" for you.", 6),
			toolCall(callID(req, 1), ToolWriteFile, input), finish(model.FinishToolCalls))
	}
	r := results[len(results)-1]
	msg := fmt.Sprintf("I wrote %v (%v bytes); it is attached.", outputField(r.Output, "filename"), outputField(r.Output, "size"))
	if r.ToolState != "output-available" {
		msg = fmt.Sprintf("Writing the file failed: %v.", outputField(r.Output, "error"))
	}
	return play(ctx, emit, textBlock("t", msg, 6), finish(model.FinishStop))
}

// demoPNG is a 16×16 image: a red diagonal on blue.
func demoPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			c := color.NRGBA{0x30, 0x60, 0xc0, 0xff}
			if x == y || x == 15-y {
				c = color.NRGBA{0xe0, 0x20, 0x20, 0xff}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// filesSeen describes the files of the last user message as the model
// received them.
func filesSeen(msgs []model.InputMessage) string {
	var lines []string
	for i := len(msgs) - 1; i >= 0 && len(lines) == 0; i-- {
		if msgs[i].Role != model.RoleUser {
			continue
		}
		for _, c := range msgs[i].Content {
			switch {
			case c.Type == model.ContentFile && len(c.Data) > 0:
				lines = append(lines, fmt.Sprintf("- %s (%s): %d bytes", c.Filename, c.MediaType, len(c.Data)))
			case c.Type == model.ContentFile:
				lines = append(lines, fmt.Sprintf("- %s (%s): by URL only", c.Filename, c.MediaType))
			case c.Type == model.ContentText && c.Filename != "" && strings.HasPrefix(c.Text, "[The file "):
				lines = append(lines, "- "+c.Text)
			case c.Type == model.ContentText && c.Filename != "":
				lines = append(lines, fmt.Sprintf("- %s (%s): as text, %d characters", c.Filename, c.MediaType, len(c.Text)))
			}
		}
		break
	}
	if len(lines) == 0 {
		return "I received no file."
	}
	return fmt.Sprintf("I received %d file(s):\n%s", len(lines), strings.Join(lines, "\n"))
}
