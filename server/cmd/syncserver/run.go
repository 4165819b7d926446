package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/metrics"
	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/server/tracing"
	"github.com/agentsync/agentsync/server/web"
)

// shutdownTimeout bounds each step of a graceful stop.
const shutdownTimeout = 10 * time.Second

// options are the parsed command line.
type options struct {
	addr     string
	db       string
	store    storeOptions
	speed    time.Duration
	auth     authOptions
	origins  []string
	logLevel slog.Level
	models   modelOptions
	mcp      mcpOptions
	resume   bool
	files    filesOptions
	// interactionTimeout is -interaction-timeout (server.Config.InteractionTimeout).
	interactionTimeout time.Duration
	// metricsAddr, if set, serves Prometheus metrics at /metrics on a
	// listener of its own.
	metricsAddr string
	// The bounds of server.Limits, one flag per field (limitflags.go).
	limits server.Limits
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("syncserver", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address (host:port; port 0 picks a free one)")
	fs.StringVar(&o.db, "db", "data/dev.db", "SQLite file; its directory is created")
	o.store.register(fs)
	fs.DurationVar(&o.speed, "speed", 15*time.Millisecond, "scripted model delay per delta (0 = full speed)")
	o.auth.register(fs)
	origins := fs.String("origins", "", "comma list of extra browser origins allowed (\"*\" = any)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	o.models.register(fs)
	o.mcp.register(fs)
	o.files.register(fs)
	registerLimits(fs, &o.limits)
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this address (host:port; off when empty); keep it off the public network")
	fs.BoolVar(&o.resume, "resume-interrupted", false, "at start, retry the turns a crash interrupted (as the retry action does)")
	fs.DurationVar(&o.interactionTimeout, "interaction-timeout", 0, "how long an approval or a question waits for its answer before it expires (0 = never)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.speed < 0 {
		return o, fmt.Errorf("-speed must not be negative, got %s", o.speed)
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("-log-level: %w", err)
	}
	for _, s := range strings.Split(*origins, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.origins = append(o.origins, s)
		}
	}
	return o, nil
}

// run wires the server and serves until ctx is cancelled, then stops
// gracefully: stop accepting, close streaming messages (Server.Close),
// close the store. It writes "listening on http://<addr>" to stdout once
// the port is bound, so tests and scripts can find a port picked with :0.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	opts, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: opts.logLevel}))
	authorizer, err := opts.auth.authorizer()
	if err != nil {
		return err
	}

	nodes, err := opts.store.cluster()
	if err != nil {
		return err
	}
	nc, err := opts.store.connectNATS(nodes, log)
	if err != nil {
		return err
	}
	if nc != nil {
		defer nc.Close() // after the server's Close (run's return)
	}
	st, err := opts.store.open(ctx, opts.db, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}()

	attachments, closeFiles, err := opts.files.open(ctx, opts.db, opts.store, st, log)
	if err != nil {
		return err
	}
	if closeFiles != nil {
		defer closeFiles() // after the server's Close, before the store's
	}

	models, defaultModel, err := opts.models.registry()
	if err != nil {
		return err
	}
	tools, closeMCP, err := opts.mcp.connect(ctx, log)
	if err != nil {
		return err
	}
	defer closeMCP()
	// Traces go to an OTLP collector when the OTEL_* variables name one
	// (off by default).
	tr, err := tracing.FromEnv(ctx)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	var tracer server.Tracer
	if tr != nil {
		tracer = tr
		log = slog.New(tracing.LogHandler(log.Handler())) // records carry trace_id
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil {
				log.Warn("flush traces", "err", err)
			}
		}()
	}
	var obs *metrics.Metrics
	var observer server.Observer
	if opts.metricsAddr != "" {
		obs = metrics.New()
		observer = obs
	}
	// New runs crash recovery (closes messages left streaming) before
	// anything is served.
	agent, err := server.New(ctx, server.Config{
		Store:              st,
		Models:             models,
		DefaultModel:       defaultModel,
		Tools:              tools,
		Speed:              model.Paced(opts.speed),
		Authorizer:         authorizer,
		AllowedOrigins:     opts.origins,
		Files:              web.Handler(),
		ResumeInterrupted:  opts.resume,
		InteractionTimeout: opts.interactionTimeout,
		Logger:             log,
		Limits:             opts.limits,
		Cluster:            nodes,
		Attachments:        attachments,
		Observer:           observer,
		Tracer:             tracer,
	})
	if err != nil {
		return err
	}
	if obs != nil {
		obs.Watch(agent)
		stop, err := serveMetrics(opts.metricsAddr, obs, stdout, log)
		if err != nil {
			_ = agent.Close(context.Background())
			return err
		}
		defer stop() // after the drain, so a last scrape may see it
	}

	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		_ = agent.Close(context.Background())
		return fmt.Errorf("listen: %w", err)
	}
	// Subscriptions (hijacked connections) derive from baseCtx, which
	// outlives ctx until the manager has ended them cleanly.
	baseCtx, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	var handler http.Handler = agent
	if tr != nil {
		handler = tracing.Handler(agent) // continue the callers' traceparent
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "listening on %s\n", url)
	log.Info("syncserver started", "url", url, "db", opts.db, "speed", opts.speed,
		"auth", opts.auth.describe(), "origins", opts.origins, "models", models.Names(), "default_model", defaultModel, "files", opts.files.mode)

	select {
	case err := <-serveErr:
		_ = agent.Close(context.Background())
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, agent, cancelBase, log)
}

// serveMetrics serves m at /metrics on a listener of its own at addr and
// writes "metrics on http://<addr>/metrics" to stdout once it is bound.
// stop closes it.
func serveMetrics(addr string, m *metrics.Metrics, stdout io.Writer, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() { _ = srv.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/metrics"
	fmt.Fprintf(stdout, "metrics on %s\n", url)
	log.Info("metrics served", "url", url)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// shutdown stops in the order that loses nothing: the agent server drains
// (new requests get 503, streaming messages are closed, subscribers get the
// final snapshots and a close frame, AI SDK streams end), then the HTTP
// server, which waits for requests still running, and what is left of the
// connections. Draining first keeps long streams from holding up
// http.Server.Shutdown until its deadline.
func shutdown(srv *http.Server, agent *server.Server, cancelBase context.CancelFunc, log *slog.Logger) error {
	log.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var errs []error
	if err := agent.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("session shutdown: %w", err))
	}
	if err := srv.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	cancelBase()
	return errors.Join(errs...)
}
