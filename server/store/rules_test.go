package store

import (
	"strings"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

func TestTitleFrom(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"  hello\n\tworld  ", "hello world"},
		{"", ""},
		{strings.Repeat("word ", 30), strings.TrimSpace(strings.Repeat("word ", 12)) + "…"},
		{strings.Repeat("é", 70), strings.Repeat("é", 60) + "…"},
	} {
		m := synccore.Message{Role: synccore.RoleUser, Parts: []synccore.Part{{Type: synccore.PartText, Text: c.text}}}
		if got := TitleFrom(m); got != c.want {
			t.Errorf("TitleFrom(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
