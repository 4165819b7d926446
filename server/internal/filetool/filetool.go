// Package filetool is the built-in write_file tool: a model writes a file
// (text or base64 bytes), the file is stored as a blob of the session, and
// the agent message gets a file part whose URL the server's authorized
// file route serves (docs/models.md "Files").
package filetool

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/agentsync/agentsync/server/blob"
	"github.com/agentsync/agentsync/server/model"
)

// Name is the tool's name.
const Name = "write_file"

// DefaultMaxBytes bounds a written file when New's max is 0: 10 MiB.
const DefaultMaxBytes = 10 << 20

// New is the write_file tool storing files in blobs, each at most max
// bytes (0: DefaultMaxBytes). Its input is {name, media_type?, content?,
// content_base64?} (exactly one of the contents); its output
// {blob_id, url, filename, media_type, size}, and the file becomes a file
// part of the agent message after the tool part.
func New(blobs blob.Store, max int64) model.Tool {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	return model.FuncTool{
		ToolSpec: model.ToolSpec{
			Name: Name,
			Description: "Writes a file for the user: it is kept with the conversation and shown in your answer as a file " +
				"the user can open or download. Give a file name with its extension and either content (text) or " +
				"content_base64 (binary bytes, base64); media_type defaults from the extension.",
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":           map[string]any{"type": "string", "description": "file name with extension, e.g. report.md"},
					"media_type":     map[string]any{"type": "string", "description": "media type, e.g. text/markdown; default from the name"},
					"content":        map[string]any{"type": "string", "description": "the file's text"},
					"content_base64": map[string]any{"type": "string", "description": "the file's bytes, base64 (instead of content)"},
				},
				"required": []string{"name"},
			},
		},
		Fn: func(ctx context.Context, input any) (any, error) { return write(ctx, blobs, max, input) },
	}
}

func write(ctx context.Context, blobs blob.Store, max int64, input any) (any, error) {
	call, ok := model.ToolCallOf(ctx)
	if !ok || call.SessionID == "" {
		return nil, fmt.Errorf("write_file: no session to write to")
	}
	in, _ := input.(map[string]any)
	name := strings.TrimSpace(model.Field(input, "name"))
	if name == "" || len(name) > 255 || strings.ContainsAny(name, "/\\\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("write_file: name must be a file name (no slashes, at most 255 bytes), got %q", name)
	}
	text, hasText := in["content"].(string)
	b64, hasB64 := in["content_base64"].(string)
	var data []byte
	switch {
	case hasText && hasB64:
		return nil, fmt.Errorf("write_file: give content or content_base64, not both")
	case hasText:
		data = []byte(text)
	case hasB64:
		d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
		if err != nil {
			return nil, fmt.Errorf("write_file: content_base64 is not base64: %v", err)
		}
		data = d
	default:
		return nil, fmt.Errorf("write_file: give content (text) or content_base64")
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("write_file: the file is %d bytes, over the %d-byte limit", len(data), max)
	}
	mediaType, err := mediaTypeOf(model.Field(input, "media_type"), name, hasText)
	if err != nil {
		return nil, err
	}
	ref, err := blobs.Put(ctx, blob.Ref{SessionID: call.SessionID, Filename: name, MediaType: mediaType}, bytes.NewReader(data), max)
	if err != nil {
		return nil, fmt.Errorf("write_file: store the file: %w", err)
	}
	url := blob.FilePath(call.SessionID, ref.BlobID)
	return model.ToolFiles{
		Output: map[string]any{"blob_id": ref.BlobID, "url": url, "filename": ref.Filename, "media_type": ref.MediaType, "size": ref.Size},
		Files:  []model.File{{URL: url, MediaType: ref.MediaType, Filename: ref.Filename}},
	}, nil
}

// mediaTypeOf is the given media type (checked), else the name's
// extension's, else text/plain for text and application/octet-stream for
// bytes.
func mediaTypeOf(given, name string, text bool) (string, error) {
	if given = strings.TrimSpace(given); given != "" {
		mt, params, err := mime.ParseMediaType(given)
		if err != nil || !strings.Contains(mt, "/") {
			return "", fmt.Errorf("write_file: media_type %q is not a media type", given)
		}
		return mime.FormatMediaType(mt, params), nil
	}
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".md", ".markdown":
		return "text/markdown", nil
	case ".csv":
		return "text/csv", nil
	case ".json":
		return "application/json", nil
	case ".txt":
		return "text/plain", nil
	case "":
	default:
		if mt := mime.TypeByExtension(ext); mt != "" {
			return mt, nil
		}
	}
	if text {
		return "text/plain", nil
	}
	return "application/octet-stream", nil
}
