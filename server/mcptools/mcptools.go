// Package mcptools offers the tools of MCP servers (stdio commands or
// streamable HTTP endpoints) to the engine as model.Tools, through the
// official Go SDK.
package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentsync/agentsync/server/model"
)

// Approval policies of an MCP server's tools.
const (
	ApprovalAsk  = "ask"  // every call waits for the user (the default)
	ApprovalAuto = "auto" // calls follow the session's approval mode
)

// Command is the stdio transport of an MCP server started as cmdline
// ("npx -y @modelcontextprotocol/server-everything"; words split on spaces).
func Command(cmdline string) (mcp.Transport, error) {
	words := strings.Fields(cmdline)
	if len(words) == 0 {
		return nil, errors.New("mcp: empty command")
	}
	return &mcp.CommandTransport{Command: exec.Command(words[0], words[1:]...)}, nil
}

// HTTP is the streamable HTTP transport of the MCP server at url.
func HTTP(url string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }

// Server is one connected MCP server.
type Server struct {
	Name    string // the name given to Connect, for errors and logs
	session *mcp.ClientSession
	tools   []model.Tool
}

// Connect opens a session with the server behind t and lists its tools;
// approval is ApprovalAsk or ApprovalAuto.
func Connect(ctx context.Context, name string, t mcp.Transport, approval string) (*Server, error) {
	if approval != ApprovalAsk && approval != ApprovalAuto {
		return nil, fmt.Errorf("mcp %s: approval policy is %q or %q, got %q", name, ApprovalAsk, ApprovalAuto, approval)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentsync", Version: "1"}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: connect: %w", name, err)
	}
	s := &Server{Name: name, session: cs}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			_ = cs.Close()
			return nil, fmt.Errorf("mcp %s: list tools: %w", name, err)
		}
		s.tools = append(s.tools, &remoteTool{session: cs, spec: model.ToolSpec{
			Name:          tool.Name,
			Description:   tool.Description,
			InputSchema:   schemaMap(tool.InputSchema),
			NeedsApproval: approval == ApprovalAsk,
		}})
	}
	return s, nil
}

// Tools are the server's tools.
func (s *Server) Tools() []model.Tool { return s.tools }

// Close ends the session (and stops a stdio server's process).
func (s *Server) Close() error { return s.session.Close() }

// remoteTool calls one tool of an MCP server.
type remoteTool struct {
	session *mcp.ClientSession
	spec    model.ToolSpec
}

func (t *remoteTool) Spec() model.ToolSpec { return t.spec }

// Run calls the tool. A result flagged isError is the tool's error (its
// text); the output is the structured content if the tool gave one, else
// {"text": the text content}.
func (t *remoteTool) Run(ctx context.Context, input any) (any, error) {
	res, err := t.session.CallTool(ctx, &mcp.CallToolParams{Name: t.spec.Name, Arguments: input})
	if err != nil {
		return nil, fmt.Errorf("mcp tool %s: %w", t.spec.Name, err)
	}
	text := contentText(res.Content)
	if res.IsError {
		return nil, fmt.Errorf("mcp tool %s: %s", t.spec.Name, text)
	}
	if res.StructuredContent != nil {
		return jsonValue(res.StructuredContent), nil
	}
	return map[string]any{"text": text}, nil
}

func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[image "+c.MIMEType+"]")
		case *mcp.AudioContent:
			parts = append(parts, "[audio "+c.MIMEType+"]")
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// schemaMap is the tool's input schema as a plain JSON object.
func schemaMap(schema any) map[string]any {
	m, _ := jsonValue(schema).(map[string]any)
	return m
}

// jsonValue round-trips v through JSON, so what reaches the store and the
// providers is plain maps, slices and scalars.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
