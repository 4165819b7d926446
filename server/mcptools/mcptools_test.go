package mcptools_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentsync/agentsync/server/mcptools"
)

type reverseIn struct {
	Text string `json:"text" jsonschema:"the text to reverse"`
}
type reverseOut struct {
	Reversed string `json:"reversed"`
}

// NewTestServer is an MCP server with two tools: reverse (structured
// output) and fail (always an error result).
func NewTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-tools", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "reverse", Description: "Reverses a text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in reverseIn) (*mcp.CallToolResult, reverseOut, error) {
			r := []rune(in.Text)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return nil, reverseOut{Reversed: string(r)}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
			return nil, struct{}{}, errors.New("it failed on purpose")
		})
	return s
}

// The test binary doubles as a stdio MCP server when asked to.
func TestMain(m *testing.M) {
	if os.Getenv("MCPTOOLS_TEST_SERVE") == "1" {
		if err := NewTestServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func check(t *testing.T, srv *mcptools.Server) {
	t.Helper()
	tools := srv.Tools()
	if len(tools) != 2 {
		t.Fatalf("%d tools", len(tools))
	}
	byName := map[string]int{}
	for i, tl := range tools {
		byName[tl.Spec().Name] = i
	}
	rev := tools[byName["reverse"]]
	spec := rev.Spec()
	if !spec.NeedsApproval || spec.Description != "Reverses a text." {
		t.Fatalf("spec %+v", spec)
	}
	if props, _ := spec.InputSchema["properties"].(map[string]any); props["text"] == nil {
		t.Fatalf("schema %v", spec.InputSchema)
	}
	out, err := rev.Run(context.Background(), map[string]any{"text": "agent"})
	if err != nil || !reflect.DeepEqual(out, map[string]any{"reversed": "tnega"}) {
		t.Fatalf("reverse: %v %v", out, err)
	}
	if _, err := tools[byName["fail"]].Run(context.Background(), map[string]any{}); err == nil || !strings.Contains(err.Error(), "on purpose") {
		t.Fatalf("fail: %v", err)
	}
}

func TestStreamableHTTP(t *testing.T) {
	s := NewTestServer()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer hs.Close()
	srv, err := mcptools.Connect(context.Background(), "http", mcptools.HTTP(hs.URL), mcptools.ApprovalAsk)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	check(t, srv)
}

func TestStdio(t *testing.T) {
	t.Setenv("MCPTOOLS_TEST_SERVE", "1")
	tr, err := mcptools.Command(os.Args[0] + " -test.run=^$")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcptools.Connect(context.Background(), "stdio", tr, mcptools.ApprovalAsk)
	if err != nil {
		t.Fatal(err)
	}
	check(t, srv)
	if err := srv.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

func TestBadPolicyAndCommand(t *testing.T) {
	if _, err := mcptools.Command("  "); err == nil {
		t.Fatal("empty command accepted")
	}
	a, _ := mcp.NewInMemoryTransports()
	if _, err := mcptools.Connect(context.Background(), "x", a, "sometimes"); err == nil {
		t.Fatal("unknown policy accepted")
	}
}
