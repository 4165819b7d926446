package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentsync/agentsync/server/mcptools"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/model/scripted"
)

// mcpOptions are the MCP servers whose tools the models get.
type mcpOptions struct {
	commands listFlag // -mcp "command args", stdio
	urls     listFlag // -mcp-url URL, streamable HTTP
	approval string
}

func (o *mcpOptions) register(fs *flag.FlagSet) {
	fs.Var(&o.commands, "mcp", `an MCP server to start and talk to over stdio, "command args" (repeatable)`)
	fs.Var(&o.urls, "mcp-url", "the URL of an MCP server speaking streamable HTTP (repeatable)")
	fs.StringVar(&o.approval, "mcp-approval", mcptools.ApprovalAsk, "approval policy of MCP tools: ask (every call waits for the user) or auto (the session's approval mode decides)")
}

// connect opens every MCP server and returns the server's tools (the demo
// tools, then each server's) and a function closing them.
func (o *mcpOptions) connect(ctx context.Context, log *slog.Logger) ([]model.Tool, func(), error) {
	tools := scripted.DemoTools()
	var servers []*mcptools.Server
	closeAll := func() {
		for _, s := range servers {
			if err := s.Close(); err != nil {
				log.Warn("close MCP server", "name", s.Name, "err", err)
			}
		}
	}
	open := func(name string, t mcp.Transport) error {
		s, err := mcptools.Connect(ctx, name, t, o.approval)
		if err != nil {
			return err
		}
		servers = append(servers, s)
		tools = append(tools, s.Tools()...)
		log.Info("MCP server connected", "name", name, "tools", len(s.Tools()))
		return nil
	}
	var errs []error
	for _, c := range o.commands {
		t, err := mcptools.Command(c)
		if err == nil {
			err = open(c, t)
		}
		errs = append(errs, err)
	}
	for _, u := range o.urls {
		errs = append(errs, open(u, mcptools.HTTP(u)))
	}
	if err := errors.Join(errs...); err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("-mcp: %w", err)
	}
	return tools, closeAll, nil
}
