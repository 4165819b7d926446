package filetool

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/model"
)

// TestWriteFile: a written file is a blob of the call's session with the
// name and type given or derived; bad inputs are errors, and nothing is
// stored for them.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	blobs, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	tool := New(blobs, 16)
	call := model.WithToolCall(ctx, model.ToolCall{SessionID: "s1", ToolCallID: "c1"})

	for _, tc := range []struct {
		input     map[string]any
		mediaType string
		bytes     string
	}{
		{map[string]any{"name": "a.md", "content": "# hi"}, "text/markdown", "# hi"},
		{map[string]any{"name": "b", "content": "plain"}, "text/plain", "plain"},
		{map[string]any{"name": "c.bin", "content_base64": "AAEC"}, "application/octet-stream", "\x00\x01\x02"},
		{map[string]any{"name": "d.png", "content_base64": "iVBORw0KGgo=", "media_type": "IMAGE/PNG"}, "image/png", "\x89PNG\r\n\x1a\n"},
	} {
		out, err := tool.Run(call, tc.input)
		if err != nil {
			t.Fatalf("%v: %v", tc.input, err)
		}
		tf := out.(model.ToolFiles)
		o := tf.Output.(map[string]any)
		if len(tf.Files) != 1 || tf.Files[0].MediaType != tc.mediaType || tf.Files[0].URL != o["url"] || tf.Files[0].Filename != tc.input["name"] {
			t.Fatalf("%v: %+v", tc.input, tf)
		}
		sid, id, ok := blob.ParseFilePath(tf.Files[0].URL)
		if !ok || sid != "s1" || id != o["blob_id"] {
			t.Fatalf("url %q", tf.Files[0].URL)
		}
		ref, err := blobs.Lookup(ctx, "s1", id)
		if err != nil || ref.MediaType != tc.mediaType || ref.Size != int64(len(tc.bytes)) {
			t.Fatalf("ref %+v %v", ref, err)
		}
		r, err := blobs.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		_ = r.Close()
		if string(got) != tc.bytes {
			t.Fatalf("bytes %q, want %q", got, tc.bytes)
		}
	}

	before, _ := blobs.Refs(ctx, "s1")
	for _, bad := range []struct {
		ctx   context.Context
		input map[string]any
		want  string
	}{
		{ctx, map[string]any{"name": "a.md", "content": "x"}, "no session"},
		{call, map[string]any{"name": "../a.md", "content": "x"}, "file name"},
		{call, map[string]any{"name": "a.md"}, "give content"},
		{call, map[string]any{"name": "a.md", "content": "x", "content_base64": "eA=="}, "not both"},
		{call, map[string]any{"name": "a.md", "content_base64": "!!"}, "not base64"},
		{call, map[string]any{"name": "a.md", "content": strings.Repeat("x", 17)}, "over the 16-byte limit"},
		{call, map[string]any{"name": "a.md", "content": "x", "media_type": "nonsense"}, "not a media type"},
	} {
		if _, err := tool.Run(bad.ctx, bad.input); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("%v: error %v, want %q", bad.input, err, bad.want)
		}
	}
	if after, _ := blobs.Refs(ctx, "s1"); len(after) != len(before) {
		t.Fatalf("refused writes stored files: %d refs, then %d", len(before), len(after))
	}
}
