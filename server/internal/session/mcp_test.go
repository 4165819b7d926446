package session

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentsync/agentsync/server/mcptools"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
	"github.com/agentsync/agentsync/synccore"
)

// An MCP server made here, connected in process: its tool is offered to
// the model, waits for the user's approval (the default policy), runs on
// the MCP server and its result goes back to the model.
func TestMCPToolThroughApproval(t *testing.T) {
	ms := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	type out struct {
		Upper string `json:"upper"`
	}
	mcp.AddTool(ms, &mcp.Tool{Name: "shout", Description: "Upper-cases a text."},
		func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
			b := []byte(i.Text)
			for k, c := range b {
				if 'a' <= c && c <= 'z' {
					b[k] = c - 32
				}
			}
			return nil, out{Upper: string(b)}, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := ms.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	srv, err := mcptools.Connect(ctx, "t", ct, mcptools.ApprovalAsk)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	e := newEnv(t, Config{
		Models: model.Registry{model.DefaultName: callsThen("shout", map[string]any{"text": "hello mcp"})},
		Tools:  append(scripted.DemoTools(), srv.Tools()...),
	})
	sid := e.session("")
	d := e.driver(sid)
	e.post(sid, "shout it")
	ip := awaitPending(t, d) // approval mode is auto: the policy asks
	if name, _ := ip.Request.(map[string]any)["tool_name"].(string); name != "shout" {
		t.Fatalf("interaction %+v", ip.Request)
	}
	if _, err := e.m.Answer(e.ctx, sid, ip.InteractionID, map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	d.converge()
	a := e.lastAgent(sid)
	tool := toolOf(t, a, "shout")
	if tool.State != synccore.ToolOutputAvailable || model.Field(tool.Output, "upper") != "HELLO MCP" ||
		textOf(a, synccore.PartText) != string(synccore.ToolOutputAvailable) {
		t.Fatalf("tool %+v, answer %q", tool, textOf(a, synccore.PartText))
	}
}
