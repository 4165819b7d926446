package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// Bad model, MCP and auth flags stop the server before it serves, saying why.
func TestFlagErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-model", "gemini:x"}, "unknown provider"},
		{[]string{"-model", "openai:gpt-4o-mini"}, "OPENAI_API_KEY"},
		{[]string{"-model-retries", "0"}, "-model-retries"},
		{[]string{"-mcp", "/nonexistent/mcp-server --stdio"}, "-mcp"},
		{[]string{"-mcp-url", "http://127.0.0.1:1/mcp"}, "-mcp"},
		{[]string{"-mcp-approval", "never", "-mcp-url", "http://127.0.0.1:1/mcp"}, "approval policy"},
		{[]string{"-token", "t", "-jwt-secret", "s"}, "exclude each other"},
		{[]string{"-jwt-jwks", "/nonexistent/jwks.json"}, "-jwt-jwks"},
		{[]string{"-files", "s3"}, "-files"},
		{[]string{"-files", "postgres"}, "-store"},
		{[]string{"-files-max-size", "0"}, "-files-max-size"},
		{[]string{"-files-key-file", "/nonexistent/key"}, "-files-key-file"},
	} {
		args := append([]string{"-addr", "127.0.0.1:0", "-db", db, "-log-level", "error"}, tc.args...)
		err := run(context.Background(), args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}
