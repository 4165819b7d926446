// Command syncserver is the agentsync reference server: sessions in
// SQLite, the scripted model, the HTTP/WebSocket API and the demo page.
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
