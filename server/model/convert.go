package model

import (
	"encoding/json"
	"strings"
)

// Helpers the providers share to put the composed input in their shape.

// joinText is the text content of a message (reasoning and files left out).
func joinText(cs []InputContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Type == ContentText {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// jsonText is v as JSON text; a string stays as it is (a tool's raw,
// unparsable input, or a plain text output).
func jsonText(v any) string {
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

func isImage(mediaType string) bool { return strings.HasPrefix(mediaType, "image/") }

// fileLine names a file the provider cannot take as content.
func fileLine(c InputContent) string {
	name := c.Filename
	if name == "" {
		name = "file"
	}
	return "[" + name + " (" + c.MediaType + "): " + c.URL + "]"
}

// schemaOf is the tool's input schema, or "any object".
func schemaOf(t ToolSpec) map[string]any {
	if t.InputSchema != nil {
		return t.InputSchema
	}
	return map[string]any{"type": "object", "properties": map[string]any{}}
}
