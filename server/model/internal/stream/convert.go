package stream

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/agentsync/agentsync/server/model"
)

// Helpers the providers share to put the composed input in their shape.

// JoinText is the text content of a message (reasoning and files left out).
func JoinText(cs []model.InputContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Type == model.ContentText {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// JSONText is v as JSON text; a string stays as it is (a tool's raw,
// unparsable input, or a plain text output).
func JSONText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// IsImage reports whether mediaType is an image type.
func IsImage(mediaType string) bool { return strings.HasPrefix(mediaType, "image/") }

// IsPDF reports whether mediaType is PDF's.
func IsPDF(mediaType string) bool {
	mt, _, _ := strings.Cut(mediaType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/pdf")
}

// Fetchable reports whether a provider can read u itself: an http(s) or
// data: URL, not a path only this server's authorized route serves.
func Fetchable(u string) bool {
	return strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "data:")
}

// DataURL is data as a base64 data: URL of mediaType.
func DataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// Base64 is data, base64-encoded (standard alphabet, padded).
func Base64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// FileLine names a file the provider cannot take as content, with its
// URL only when that is http(s).
func FileLine(c model.InputContent) string {
	name := c.Filename
	if name == "" {
		name = "file"
	}
	if !strings.HasPrefix(c.URL, "https://") && !strings.HasPrefix(c.URL, "http://") {
		// Not the bytes of a data: URL again as text, nor a path only
		// this server's authorized route serves.
		return "[" + name + " (" + c.MediaType + ")]"
	}
	return "[" + name + " (" + c.MediaType + "): " + c.URL + "]"
}

// SchemaOf is the tool's input schema, or "any object".
func SchemaOf(t model.ToolSpec) map[string]any {
	if t.InputSchema != nil {
		return t.InputSchema
	}
	return map[string]any{"type": "object", "properties": map[string]any{}}
}
