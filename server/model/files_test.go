package model_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/internal/composer"
	"github.com/agentsync/agentsync/server/internal/providertest"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/anthropic"
	"github.com/agentsync/agentsync/synccore"
)

// pngBytes is a real PNG of w×h pixels.
func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rnd := rand.New(rand.NewChaCha8([32]byte{7})) // noise: a PNG as large as its pixels
	for i := range img.Pix {
		img.Pix[i] = byte(rnd.Uint32())
	}
	img.Set(0, 0, color.NRGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const pdfBytes = "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"

// filesFixture stores files in a real blob.Dir as a session's and returns
// the user message carrying them, the bytes by name, and the store.
func filesFixture(t *testing.T, ctx context.Context, sid string) (synccore.Message, map[string][]byte, blob.Store) {
	t.Helper()
	blobs, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	files := []struct {
		name, mediaType string
		data            []byte
	}{
		{"big.png", "image/png", pngBytes(t, 300, 300)}, // ~270 KB, over the budget
		{"cat.png", "image/png", pngBytes(t, 8, 8)},
		{"doc.pdf", "application/pdf", []byte(pdfBytes)},
		{"notes.md", "text/markdown", []byte("# Notes\n\n- one, two\n")},
		{"table.csv", "text/csv", []byte("a,b\n1,2\n")},
	}
	msg := synccore.Message{Role: synccore.RoleUser, Parts: []synccore.Part{{Type: synccore.PartText, Text: "What is in these?"}}}
	byName := map[string][]byte{}
	for _, f := range files {
		ref, err := blobs.Put(ctx, blob.Ref{SessionID: sid, Filename: f.name, MediaType: f.mediaType}, bytes.NewReader(f.data), 0)
		if err != nil {
			t.Fatal(err)
		}
		byName[f.name] = f.data
		msg.Parts = append(msg.Parts, synccore.Part{Type: synccore.PartFile, URL: blob.FilePath(sid, ref.BlobID), MediaType: f.mediaType, Filename: f.name})
	}
	return msg, byName, blobs
}

// fileBudget fits every file of filesFixture but big.png.
const fileBudget = 64 << 10

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestProvidersReceiveFiles: a user message's files, read by the composer
// from a real blob.Dir, reach each provider's server in its documented
// input shape: OpenAI Chat Completions image_url parts with a data: URL
// and a file part for the PDF; Anthropic image and document blocks with
// base64 sources; text files as text; the file over the budget as a note;
// and never the session's file URL, which only the kit's route serves.
func TestProvidersReceiveFiles(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const sid = "ses_files"
	msg, data, blobs := filesFixture(t, ctx, sid)
	in := composer.Files{Blobs: blobs, Budget: fileBudget}.Attach(ctx, sid, composer.Compose([]synccore.Message{msg}))

	mdText := composer.FileText("notes.md", "text/markdown", data["notes.md"])
	csvText := composer.FileText("table.csv", "text/csv", data["table.csv"])
	wantNote := func(text string) bool {
		return strings.HasPrefix(text, "[The file big.png (image/png, ") && strings.Contains(text, "left out") &&
			strings.Contains(text, "65536 bytes")
	}

	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "text.sse")})
			if _, err := play(t, k.open(srv.URL), model.Request{Model: "m", Messages: in}); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			req := reqs[0]
			if bytes.Contains(req.Raw, []byte("/v1/sessions/")) {
				t.Fatalf("the request names the session's file URL: %.300s", req.Raw)
			}
			// Within budget: the files' bytes, base64, plus the JSON around them.
			if max := fileBudget*4/3 + 8<<10; len(req.Raw) > max {
				t.Fatalf("request of %d bytes, over the %d a %d-byte file budget allows", len(req.Raw), max, fileBudget)
			}
			msgs, _ := req.Body["messages"].([]any)
			if len(msgs) != 1 {
				t.Fatalf("messages %v", req.Body["messages"])
			}
			content, _ := msgs[0].(map[string]any)["content"].([]any)
			if len(content) != 6 {
				t.Fatalf("content of %d parts: %.2000s", len(content), req.Raw)
			}
			part := func(i int) map[string]any { return content[i].(map[string]any) }
			textOf := func(i int) string { s, _ := part(i)["text"].(string); return s }
			if part(0)["type"] != "text" || textOf(0) != "What is in these?" {
				t.Fatalf("part 0 %v", part(0))
			}
			if part(1)["type"] != "text" || !wantNote(textOf(1)) {
				t.Fatalf("part 1, the file over budget: %v", part(1))
			}
			switch k.name {
			case "openai":
				want := []map[string]any{
					{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + b64(data["cat.png"])}},
					{"type": "file", "file": map[string]any{"filename": "doc.pdf", "file_data": "data:application/pdf;base64," + b64(data["doc.pdf"])}},
					{"type": "text", "text": mdText},
					{"type": "text", "text": csvText},
				}
				for i, w := range want {
					if !reflect.DeepEqual(part(i+2), w) {
						t.Fatalf("part %d:\n got %v\nwant %v", i+2, part(i+2), w)
					}
				}
			case "anthropic":
				want := []map[string]any{
					{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64(data["cat.png"])}},
					{"type": "document", "source": map[string]any{"type": "base64", "media_type": "application/pdf", "data": b64(data["doc.pdf"])}},
					{"type": "text", "text": mdText},
					{"type": "text", "text": csvText},
				}
				for i, w := range want {
					if !reflect.DeepEqual(part(i+2), w) {
						t.Fatalf("part %d:\n got %v\nwant %v", i+2, part(i+2), w)
					}
				}
			}
		})
	}
}

// TestProvidersNeverSendServerPaths: a file the composer did not read
// (no blob store) reaches the provider as a line naming it, not as an
// image URL the provider could not fetch; an https image passes as a URL.
func TestProvidersNeverSendServerPaths(t *testing.T) {
	t.Parallel()
	in := []model.InputMessage{{Role: model.RoleUser, Content: []model.InputContent{
		{Type: model.ContentFile, URL: "/v1/sessions/s/files/" + strings.Repeat("a", 64), MediaType: "image/png", Filename: "x.png"},
		{Type: model.ContentFile, URL: "https://example.com/y.png", MediaType: "image/png", Filename: "y.png"},
	}}}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.New()
			defer srv.Close()
			srv.Queue(providertest.Reply{Fixture: fixture(k, "text.sse")})
			if _, err := play(t, k.open(srv.URL), model.Request{Model: "m", Messages: in}); err != nil {
				t.Fatal(err)
			}
			content := srv.Requests()[0].Body["messages"].([]any)[0].(map[string]any)["content"].([]any)
			first, second := content[0].(map[string]any), content[1].(map[string]any)
			if first["type"] != "text" || !strings.Contains(first["text"].(string), "x.png") {
				t.Fatalf("server path sent as %v", first)
			}
			var url any
			switch k.name {
			case "openai":
				url = second["image_url"].(map[string]any)["url"]
			case "anthropic":
				url = second["source"].(map[string]any)["url"]
			}
			if url != "https://example.com/y.png" {
				t.Fatalf("https image sent as %v", second)
			}
		})
	}
}

// Anthropic bounds an image (5 MiB base64); the bound is seen through
// the retry wrapper. OpenAI states none.
func TestMaxImageOf(t *testing.T) {
	t.Parallel()
	if got := model.MaxImageOf(kinds[1].open("http://127.0.0.1:1")); got != anthropic.MaxImage || anthropic.MaxImage*4/3 != 5<<20 {
		t.Fatalf("anthropic: %d", got)
	}
	if got := model.MaxImageOf(kinds[0].open("http://127.0.0.1:1")); got != 0 {
		t.Fatalf("openai: %d", got)
	}
}
