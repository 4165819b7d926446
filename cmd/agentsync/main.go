// Command agentsync is a terminal chat client of an agentsync server, built
// on package bindings (the WebAssembly core under wazero, or the native core
// with -core native) and the Charm libraries.
//
//	agentsync -url http://127.0.0.1:8080            # the interactive UI
//	agentsync -url http://127.0.0.1:8080 -p "hello" # print the answer, exit
//
// With -p it creates a session, sends the prompt, waits for the end of the
// turn and prints the answer's final text (the text of the turn's last step)
// on stdout and nothing else: exit status 0 when the turn ended well, 1 with
// a message on stderr otherwise (an error, a stop, an interaction it cannot
// answer), 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
)

// options are the command's flags.
type options struct {
	url       string
	token     string
	prompt    string
	session   string
	model     string
	coreName  string
	theme     string
	yes       bool
	pageLimit int
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it parses args and returns the exit
// status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentsync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.url, "url", envOr("AGENTSYNC_URL", "http://127.0.0.1:8080"), "the server's base URL (env AGENTSYNC_URL)")
	fs.StringVar(&o.token, "token", os.Getenv("AGENTSYNC_TOKEN"), "bearer token sent to the server (env AGENTSYNC_TOKEN)")
	fs.StringVar(&o.prompt, "p", "", "non-interactive: send this prompt (- reads it from stdin) to a new session, print the answer's final text, exit")
	fs.StringVar(&o.session, "session", "", "open this session at once instead of the session list")
	fs.StringVar(&o.model, "model", "", "model of the sessions this client creates (empty: the server's default)")
	fs.StringVar(&o.coreName, "core", "wasm", "sync core: wasm (the WebAssembly module under wazero) or native")
	fs.StringVar(&o.theme, "theme", "dark", "colours for a dark or light terminal: dark, light, or auto (ask the terminal); NO_COLOR disables colour")
	fs.BoolVar(&o.yes, "yes", false, "with -p: approve every tool call the turn asks about")
	fs.IntVar(&o.pageLimit, "page", 0, "messages per history page (0: the core's default)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentsync: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.coreName != "wasm" && o.coreName != "native" {
		fmt.Fprintf(stderr, "agentsync: -core is wasm or native, not %q\n", o.coreName)
		return 2
	}
	o.url = strings.TrimRight(o.url, "/")
	if o.prompt == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "agentsync: read the prompt: %v\n", err)
			return 1
		}
		if o.prompt = strings.TrimSpace(string(b)); o.prompt == "" {
			fmt.Fprintln(stderr, "agentsync: -p -: stdin held no prompt")
			return 2
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.prompt != "" {
		text, err := printAnswer(ctx, o, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "agentsync: %v\n", err)
			return 1
		}
		if _, err := io.WriteString(stdout, withNewline(text)); err != nil {
			fmt.Fprintf(stderr, "agentsync: %v\n", err)
			return 1
		}
		return 0
	}
	stop() // the UI reads Ctrl-C as a key
	if err := runUI(o); err != nil {
		fmt.Fprintf(stderr, "agentsync: %v\n", err)
		return 1
	}
	return 0
}

// withNewline ends s with one newline unless it already ends with one.
func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// clientConfig is the bindings configuration of a session's client.
func (o options) clientConfig(sessionID string) bindings.Config {
	cfg := bindings.Config{BaseURL: o.url, Token: o.token, SessionID: sessionID, PageLimit: o.pageLimit}
	if o.coreName == "native" {
		cfg.Core = core.NewNativeCore()
	}
	return cfg
}

func (o options) api() *bindings.API {
	return &bindings.API{BaseURL: o.url, Token: o.token}
}
