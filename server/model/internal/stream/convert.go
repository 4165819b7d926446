package stream

import (
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

// FileLine names a file the provider cannot take as content.
func FileLine(c model.InputContent) string {
	name := c.Filename
	if name == "" {
		name = "file"
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
