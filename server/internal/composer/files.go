package composer

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/model"
)

// DefaultFileBudget is the file bytes one model request carries when
// Files.Budget is 0: 10 MiB, about 13.4 MiB once base64-encoded, under
// both providers' request bounds (Anthropic: 32 MB a request).
const DefaultFileBudget = 10 << 20

// Files reads the bytes of the files in the user messages of a composed
// input, so that a provider sends a model the file itself (docs/models.md
// "Files"): images and PDFs as bytes (InputContent.Data), which the
// provider puts in its documented input shape, and text files (text/plain,
// markdown, csv, json) as text. The bytes come from the blob store (a file
// of the session: a /v1/sessions/{id}/files/{blob} URL that only the
// authorized file route serves, so the provider never gets that URL) or
// from a data: URL; http(s) URLs pass as they are.
//
// Budget bounds the bytes of the files one model request carries (every
// step of a turn sends them again); the newest files come first. A file
// that does not fit, or cannot be read, is replaced by a short text note
// saying it was left out and why: never dropped silently.
type Files struct {
	Blobs  blob.Store // nil: files of the session are not read (a note says so)
	Budget int64      // bytes per request; 0 = DefaultFileBudget; < 0: no file is read
	// MaxImage, if > 0, bounds one image (the provider's own bound,
	// model.MaxImageOf); a larger one becomes a note.
	MaxImage int64
}

// budget is f's budget in bytes, resolved.
func (f Files) budget() int64 {
	switch {
	case f.Budget == 0:
		return DefaultFileBudget
	case f.Budget < 0:
		return 0
	}
	return f.Budget
}

// Attach resolves the files of in's user messages for session sessionID,
// newest first within the budget, and returns the input with each one
// replaced: an image or a PDF by the same file with Data, a text file by
// its text, a file left out by a note (both text entries that keep the
// file's Filename and MediaType, so a reader tells them from the user's
// own text). Assistant entries' files (an
// agent's own, whose content the model wrote) and files of other types are
// left as they are. in is not modified.
func (f Files) Attach(ctx context.Context, sessionID string, in []model.InputMessage) []model.InputMessage {
	left := f.budget()
	var out []model.InputMessage
	for i := len(in) - 1; i >= 0; i-- {
		m := in[i]
		if m.Role != model.RoleUser || !hasFile(m.Content) {
			continue
		}
		if out == nil {
			out = append([]model.InputMessage(nil), in...)
		}
		content := append([]model.InputContent(nil), m.Content...)
		for j, c := range content {
			if c.Type == model.ContentFile {
				content[j] = f.attach(ctx, sessionID, c, &left)
			}
		}
		out[i].Content = content
	}
	if out == nil {
		return in
	}
	return out
}

func hasFile(cs []model.InputContent) bool {
	for _, c := range cs {
		if c.Type == model.ContentFile {
			return true
		}
	}
	return false
}

// Kinds of file content the providers take.
const (
	kindOther = iota
	kindImage
	kindPDF
	kindText
)

func kindOf(mediaType string) int {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(mediaType))
	}
	switch mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return kindImage
	case "application/pdf":
		return kindPDF
	case "text/plain", "text/markdown", "text/x-markdown", "text/csv", "application/json", "text/json":
		return kindText
	}
	return kindOther
}

// attach resolves one file, taking its bytes from *left.
func (f Files) attach(ctx context.Context, sessionID string, c model.InputContent, left *int64) model.InputContent {
	kind := kindOf(c.MediaType)
	if kind == kindOther {
		return c // the provider names it
	}
	var data []byte
	switch {
	case strings.HasPrefix(c.URL, "data:"):
		d, mediaType, err := decodeDataURL(c.URL)
		if err != nil {
			return note(c, 0, "its data: URL is malformed ("+err.Error()+")")
		}
		if c.MediaType == "" {
			c.MediaType = mediaType
		}
		if int64(len(d)) > *left {
			return note(c, int64(len(d)), f.overBudget())
		}
		if kind == kindImage && f.MaxImage > 0 && int64(len(d)) > f.MaxImage {
			return note(c, int64(len(d)), f.overImage())
		}
		data = d
	default:
		_, id, ok := blob.ParseFilePath(c.URL)
		if !ok {
			// An http(s) URL: the provider passes it (an image, a PDF
			// where the API takes URLs) or names the file.
			return c
		}
		if f.Blobs == nil {
			return note(c, 0, "this server keeps no files")
		}
		// The session's own reference (a fork shares its parent's), not
		// the session the URL names: the model reads only what the
		// session's readers can read.
		ref, err := f.Blobs.Lookup(ctx, sessionID, id)
		if err != nil {
			return note(c, 0, "it could not be read ("+err.Error()+")")
		}
		if ref.Size > *left {
			return note(c, ref.Size, f.overBudget())
		}
		if kind == kindImage && f.MaxImage > 0 && ref.Size > f.MaxImage {
			return note(c, ref.Size, f.overImage())
		}
		if data, err = readBlob(ctx, f.Blobs, id, ref.Size); err != nil {
			return note(c, ref.Size, "it could not be read ("+err.Error()+")")
		}
	}
	*left -= int64(len(data))
	if kind == kindText {
		return model.InputContent{Type: model.ContentText, Text: FileText(c.Filename, c.MediaType, data), Filename: c.Filename, MediaType: c.MediaType}
	}
	c.Data = data
	return c
}

func (f Files) overImage() string {
	return fmt.Sprintf("it is over the %d bytes an image may have for this model", f.MaxImage)
}

func (f Files) overBudget() string {
	return fmt.Sprintf("it is over the %d bytes of files a model request may carry", f.budget())
}

// readBlob reads a blob whole, at most size bytes.
func readBlob(ctx context.Context, blobs blob.Store, id string, size int64) ([]byte, error) {
	r, err := blobs.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() != size {
		return nil, fmt.Errorf("the blob is %d bytes, its reference says %d", r.Size(), size)
	}
	return io.ReadAll(io.LimitReader(r, size))
}

// FileText is how a text file reaches the model: its text between tags
// naming it, as a context part's (TagContext). Bytes that are not UTF-8
// are replaced.
func FileText(filename, mediaType string, data []byte) string {
	return fmt.Sprintf("<file name=%q media_type=%q>\n%s\n</file>", displayName(filename), mediaType, strings.ToValidUTF8(string(data), "\uFFFD"))
}

// note is the text that stands for a file left out.
func note(c model.InputContent, size int64, why string) model.InputContent {
	what := fmt.Sprintf("%s (%s", displayName(c.Filename), c.MediaType)
	if size > 0 {
		what += fmt.Sprintf(", %d bytes", size)
	}
	return model.InputContent{Type: model.ContentText, Text: "[The file " + what + ") was left out: " + why + ".]",
		Filename: displayName(c.Filename), MediaType: c.MediaType}
}

func displayName(name string) string {
	if name == "" {
		return "file"
	}
	return name
}

// decodeDataURL decodes a data: URL (RFC 2397): its bytes and media type.
func decodeDataURL(u string) ([]byte, string, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return nil, "", fmt.Errorf("not a data: URL")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, "", fmt.Errorf("no comma")
	}
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if isBase64 {
		d, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			d, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(payload, "="))
		}
		return d, mediaType, err
	}
	s, err := url.PathUnescape(payload)
	return []byte(s), mediaType, err
}
