package main

import (
	"flag"
	"time"

	"github.com/agentsync/agentsync/server"
)

// limitFlag is one flag of a server.Limits field: same name in the usage,
// same default, same rule (0 = the default, negative = off).
type limitFlag struct {
	name, usage string
	bind        func(fs *flag.FlagSet, l *server.Limits, name, usage string)
}

func intFlag(f func(*server.Limits) *int, def int) func(*flag.FlagSet, *server.Limits, string, string) {
	return func(fs *flag.FlagSet, l *server.Limits, name, usage string) { fs.IntVar(f(l), name, def, usage) }
}

func durFlag(f func(*server.Limits) *time.Duration, def time.Duration) func(*flag.FlagSet, *server.Limits, string, string) {
	return func(fs *flag.FlagSet, l *server.Limits, name, usage string) { fs.DurationVar(f(l), name, def, usage) }
}

// limitFlags are the flags of server.Limits, each the field of the same
// meaning (go doc server.Limits); limits_test.go checks them against it.
var limitFlags = []limitFlag{
	{"rate-limit", "server.Limits.RequestsPerSecond: requests per second of one client, sustained; over it: 429 rate_limited with Retry-After", func(fs *flag.FlagSet, l *server.Limits, name, usage string) {
		fs.Float64Var(&l.RequestsPerSecond, name, server.DefaultRequestsPerSecond, usage)
	}},
	{"rate-burst", "server.Limits.RequestBurst: requests one client may send at once on top of -rate-limit", intFlag(func(l *server.Limits) *int { return &l.RequestBurst }, server.DefaultRequestBurst)},
	{"max-subscribers-per-session", "server.Limits.SubscribersPerSession: open subscriptions of one session", intFlag(func(l *server.Limits) *int { return &l.SubscribersPerSession }, server.DefaultSubscribersPerSession)},
	{"max-subscribers-per-principal", "server.Limits.SubscribersPerPrincipal: open subscriptions of one client", intFlag(func(l *server.Limits) *int { return &l.SubscribersPerPrincipal }, server.DefaultSubscribersPerPrincipal)},
	{"idle-timeout", "server.Limits.IdleTimeout: unload a session from memory after this long without requests, turns or subscribers", durFlag(func(l *server.Limits) *time.Duration { return &l.IdleTimeout }, server.DefaultIdleTimeout)},
	{"write-interval", "server.Limits.WriteInterval: least time between two deliveries of a session's frames to its subscribers, deltas folded meanwhile (0 = automatic: scales with the node's subscribers, none under 100; many viewers: one write per interval, up to this much latency)", durFlag(func(l *server.Limits) *time.Duration { return &l.WriteInterval }, 0)},
	{"max-loaded", "server.Limits.MaxLoaded: most sessions kept in memory; past it the least recently used idle ones are unloaded", intFlag(func(l *server.Limits) *int { return &l.MaxLoaded }, server.DefaultMaxLoaded)},
}

// registerLimits binds the limit flags to the fields of l.
func registerLimits(fs *flag.FlagSet, l *server.Limits) {
	for _, f := range limitFlags {
		f.bind(fs, l, f.name, f.usage+" (0 = the default, negative = off)")
	}
}
