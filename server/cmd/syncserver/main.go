// Command syncserver is the agentsync reference server: sessions in
// SQLite, the scripted model or real ones, the HTTP/WebSocket API (docs/protocol.md)
// and the demo page at "/".
//
//	syncserver [-addr 127.0.0.1:8080] [-db data/dev.db | -store postgres://... [-node NAME -lease-ttl 5s]] [-speed 15ms]
//	           [-token SECRET | -jwt-secret SECRET -jwt-jwks keys.json]
//	           [-origins http://localhost:5173,...] [-log-level info]
//	           [-model PROVIDER:MODEL ...] [-openai-base-url URL] [-anthropic-thinking N]
//	           [-mcp "command args" ...] [-mcp-url URL ...] [-mcp-approval ask|auto]
//	           [-context-budget N] [-resume-interrupted] [-interaction-timeout 0]
//	           [-idle-timeout 10m] [-max-loaded 10000]
//	           [-rate-limit 20 -rate-burst 100]
//	           [-max-subscribers-per-session 32] [-max-subscribers-per-principal 64]
//	           [-write-interval 0]
//
// -model picks real models (openai:..., anthropic:...; keys from
// OPENAI_API_KEY / ANTHROPIC_API_KEY), -mcp/-mcp-url add the tools of MCP
// servers: see docs/models.md. Without -model the scripted model is used.
// Sessions leave memory after -idle-timeout without use, or past
// -max-loaded (least recently used first), and load again from the store
// on the next request or subscription.
// -node makes the server one of several nodes on the -store database: it
// serves a session only while it holds the session's lease (docs/storage.md).
// -rate-limit/-rate-burst bound each client's requests (429 rate_limited
// with Retry-After past them), -max-subscribers-* its open subscriptions;
// 0 turns one off. -write-interval (default 0: none) is the least time
// between two writes to a subscriber: fewer writes for a node with many
// viewers, up to that much latency (docs/server.md "Many viewers").
// -speed is the scripted model's delay per streamed delta (0: full speed).
// With -token every API request needs "Authorization: Bearer SECRET" (or
// ?token= on the WebSocket); with -jwt-secret (or $AGENTSYNC_JWT_SECRET)
// and/or -jwt-jwks it needs a signed JWT, and each session belongs to the
// JWT's sub that created it (docs/protocol.md §3.1). SIGINT/SIGTERM stop it gracefully: streaming
// messages are closed with an error part before exit; after a crash the
// next start does the same before serving.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the usage was printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "syncserver:", err)
		os.Exit(1)
	}
}
