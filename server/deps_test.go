package server

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// maxThirdParty bounds the third-party packages an app that imports server
// links (110 before the providers, the demo page and NATS moved to their
// own packages; 8 after).
const maxThirdParty = 30

// TestDependencyBound: `go list -deps` of this package names fewer than
// maxThirdParty packages outside the standard library and this module,
// and none of the SDKs or clients an app opts into by importing them.
func TestDependencyBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps",
		"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var third []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/agentsync/agentsync") {
			third = append(third, p)
		}
	}
	if len(third) >= maxThirdParty {
		t.Errorf("server links %d third-party packages, want fewer than %d:\n%s", len(third), maxThirdParty, strings.Join(third, "\n"))
	}
	for _, p := range third {
		for _, banned := range []string{"openai-go", "anthropic-sdk-go", "nats-io", "modelcontextprotocol", "tus/tusd", "prometheus", "opentelemetry"} {
			if strings.Contains(p, banned) {
				t.Errorf("server links %s: only an app that imports its package should", p)
			}
		}
	}
	for _, own := range []string{"server/model/openai", "server/model/anthropic", "server/web", "server/natsbus", "server/mcptools", "server/uploads", "server/blob/pgblob", "server/metrics", "server/tracing", "wasm/module"} {
		if strings.Contains(string(out), "github.com/agentsync/agentsync/"+own+"\n") {
			t.Errorf("server links %s", own)
		}
	}
	t.Logf("%d third-party packages: %s", len(third), strings.Join(third, " "))
}

// TestNoTerminalUIDeps: the terminal client's libraries (the Charm stack,
// cmd/agentsync) stay out of the libraries an app imports: the server, the
// Go host and the core.
func TestNoTerminalUIDeps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps",
		"-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".", "../bindings/...", "../synccore").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/charmbracelet/", "github.com/muesli/", "github.com/yuin/goldmark", "github.com/alecthomas/chroma", "cmd/agentsync"} {
			if strings.Contains(p, banned) {
				t.Errorf("server, bindings or synccore links %s: only cmd/agentsync should", p)
			}
		}
	}
}
