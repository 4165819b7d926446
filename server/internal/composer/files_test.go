package composer

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

func put(t *testing.T, ctx context.Context, blobs blob.Store, sid, name, mediaType string, data []byte) synccore.Part {
	t.Helper()
	ref, err := blobs.Put(ctx, blob.Ref{SessionID: sid, Filename: name, MediaType: mediaType}, bytes.NewReader(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	return synccore.Part{Type: synccore.PartFile, URL: blob.FilePath(sid, ref.BlobID), MediaType: mediaType, Filename: name}
}

func openBlobs(t *testing.T) blob.Store {
	t.Helper()
	blobs, err := blob.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	return blobs
}

// TestAttachBudget: the newest message's files are read first; an older
// one that no longer fits becomes a note naming it, its size and the
// budget; the input given is not changed.
func TestAttachBudget(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	blobs := openBlobs(t)
	older := bytes.Repeat([]byte{0x89}, 600)
	newer := bytes.Repeat([]byte{0x42}, 500)
	history := []synccore.Message{
		user(synccore.VisibilityVisible, synccore.Part{Type: synccore.PartText, Text: "first"}, put(t, ctx, blobs, "s", "old.png", "image/png", older)),
		agent(synccore.Part{Type: synccore.PartText, StepID: "step-1", Text: "ok"},
			synccore.Part{Type: synccore.PartFile, StepID: "step-1", URL: blob.FilePath("s", strings.Repeat("c", 64)), MediaType: "image/png", Filename: "mine.png"}),
		user(synccore.VisibilityVisible, put(t, ctx, blobs, "s", "new.pdf", "application/pdf", newer),
			put(t, ctx, blobs, "s", "a.json", "application/json", []byte(`{"a":1}`))),
	}
	in := Compose(history)
	before := Compose(history)
	got := Files{Blobs: blobs, Budget: 1000}.Attach(ctx, "s", in)
	if !reflect.DeepEqual(in, before) {
		t.Fatal("Attach changed its input")
	}
	want := []model.InputMessage{
		{Role: model.RoleUser, Content: []model.InputContent{text("first"),
			{Type: model.ContentText, Filename: "old.png", MediaType: "image/png",
				Text: "[The file old.png (image/png, 600 bytes) was left out: it is over the 1000 bytes of files a model request may carry.]"}}},
		// The agent's own file is left to the provider (a line naming it).
		{Role: model.RoleAssistant, Content: []model.InputContent{text("ok"),
			{Type: model.ContentFile, URL: blob.FilePath("s", strings.Repeat("c", 64)), MediaType: "image/png", Filename: "mine.png"}}},
		{Role: model.RoleUser, Content: []model.InputContent{
			{Type: model.ContentFile, URL: in[2].Content[0].URL, MediaType: "application/pdf", Filename: "new.pdf", Data: newer},
			{Type: model.ContentText, Filename: "a.json", MediaType: "application/json",
				Text: "<file name=\"a.json\" media_type=\"application/json\">\n{\"a\":1}\n</file>"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Attach:\n got %#v\nwant %#v", got, want)
	}
}

// TestAttachSources: data: URLs are decoded (within the budget too); a
// fork reads the files it shares with its parent through its own
// references, whatever session the URL names; a blob the session does not
// reference, or a server without a blob store, gives a note, as does a
// negative budget; https URLs and other types pass as they are.
func TestAttachSources(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	blobs := openBlobs(t)
	parentFile := put(t, ctx, blobs, "parent", "p.txt", "text/plain", []byte("from the parent"))
	if err := blobs.Share(ctx, "parent", "fork"); err != nil {
		t.Fatal(err)
	}
	other := put(t, ctx, blobs, "other", "o.png", "image/png", []byte("not yours"))
	msg := user(synccore.VisibilityVisible,
		synccore.Part{Type: synccore.PartFile, URL: "data:text/plain;base64,aGVsbG8=", MediaType: "text/plain", Filename: "h.txt"},
		synccore.Part{Type: synccore.PartFile, URL: "data:image/png;base64,iVBORw0KGgo=", MediaType: "image/png", Filename: "d.png"},
		parentFile,
		other,
		synccore.Part{Type: synccore.PartFile, URL: "https://example.com/x.png", MediaType: "image/png", Filename: "x.png"},
		synccore.Part{Type: synccore.PartFile, URL: "https://example.com/x.zip", MediaType: "application/zip", Filename: "x.zip"},
	)
	got := Files{Blobs: blobs}.Attach(ctx, "fork", Compose([]synccore.Message{msg}))[0].Content
	if len(got) != 6 {
		t.Fatalf("%d contents", len(got))
	}
	if got[0].Filename != "h.txt" || got[0].Text != "<file name=\"h.txt\" media_type=\"text/plain\">\nhello\n</file>" {
		t.Fatalf("data: text %#v", got[0])
	}
	if !bytes.Equal(got[1].Data, []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}) {
		t.Fatalf("data: image %#v", got[1])
	}
	if got[2].Filename != "p.txt" || got[2].Text != "<file name=\"p.txt\" media_type=\"text/plain\">\nfrom the parent\n</file>" {
		t.Fatalf("fork's shared file %#v", got[2])
	}
	if got[3].Type != model.ContentText || !strings.HasPrefix(got[3].Text, "[The file o.png (image/png) was left out: it could not be read") {
		t.Fatalf("another session's file %#v", got[3])
	}
	if got[4].Data != nil || got[4].URL != "https://example.com/x.png" || got[5].URL != "https://example.com/x.zip" {
		t.Fatalf("https files %#v %#v", got[4], got[5])
	}

	for name, f := range map[string]Files{"no store": {}, "negative budget": {Blobs: blobs, Budget: -1}} {
		c := f.Attach(ctx, "fork", Compose([]synccore.Message{user(synccore.VisibilityVisible, parentFile)}))[0].Content[0]
		if c.Type != model.ContentText || !strings.Contains(c.Text, "p.txt") || !strings.Contains(c.Text, "left out") {
			t.Fatalf("%s: %#v", name, c)
		}
	}
}

// TestAttachMaxImage: an image over the provider's own bound becomes a
// note and takes nothing from the budget; a PDF of the same size goes.
func TestAttachMaxImage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	blobs := openBlobs(t)
	data := bytes.Repeat([]byte{1}, 300)
	msg := user(synccore.VisibilityVisible, put(t, ctx, blobs, "s", "i.png", "image/png", data), put(t, ctx, blobs, "s", "d.pdf", "application/pdf", data))
	got := Files{Blobs: blobs, Budget: 400, MaxImage: 200}.Attach(ctx, "s", Compose([]synccore.Message{msg}))[0].Content
	if got[0].Type != model.ContentText || got[0].Text != "[The file i.png (image/png, 300 bytes) was left out: it is over the 200 bytes an image may have for this model.]" {
		t.Fatalf("image %#v", got[0])
	}
	if !bytes.Equal(got[1].Data, data) {
		t.Fatalf("pdf %#v", got[1])
	}
}
