package main

import (
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/agentsync/agentsync/server"
)

// TestLimitFlagsMapOneToOne: each limit flag's default is its field's
// default, and any value (0, negative, positive) lands in the field as
// given, so a flag means exactly what the field means.
func TestLimitFlagsMapOneToOne(t *testing.T) {
	for _, tc := range []struct {
		flag  string
		def   any
		field func(server.Limits) any
		set   string
		want  any
	}{
		{"rate-limit", float64(server.DefaultRequestsPerSecond), func(l server.Limits) any { return l.RequestsPerSecond }, "-1", float64(-1)},
		{"rate-burst", server.DefaultRequestBurst, func(l server.Limits) any { return l.RequestBurst }, "0", 0},
		{"max-subscribers-per-session", server.DefaultSubscribersPerSession, func(l server.Limits) any { return l.SubscribersPerSession }, "-1", -1},
		{"max-subscribers-per-principal", server.DefaultSubscribersPerPrincipal, func(l server.Limits) any { return l.SubscribersPerPrincipal }, "7", 7},
		{"idle-timeout", server.DefaultIdleTimeout, func(l server.Limits) any { return l.IdleTimeout }, "-1s", -time.Second},
		{"write-interval", time.Duration(0), func(l server.Limits) any { return l.WriteInterval }, "20ms", 20 * time.Millisecond},
		{"max-loaded", server.DefaultMaxLoaded, func(l server.Limits) any { return l.MaxLoaded }, "-1", -1},
	} {
		var l server.Limits
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		registerLimits(fs, &l)
		f := fs.Lookup(tc.flag)
		if f == nil {
			t.Errorf("no -%s flag", tc.flag)
			continue
		}
		if f.DefValue != fmt.Sprint(tc.def) {
			t.Errorf("-%s defaults to %s, its field to %v", tc.flag, f.DefValue, tc.def)
		}
		if err := fs.Parse(nil); err != nil || tc.field(l) != tc.def {
			t.Errorf("-%s unset: field %v, want the default %v (%v)", tc.flag, tc.field(l), tc.def, err)
		}
		if err := fs.Parse([]string{"-" + tc.flag + "=" + tc.set}); err != nil || tc.field(l) != tc.want {
			t.Errorf("-%s=%s: field %v, want %v (%v)", tc.flag, tc.set, tc.field(l), tc.want, err)
		}
	}
	var l server.Limits
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	registerLimits(fs, &l)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n != len(limitFlags) || n != 7 {
		t.Errorf("%d limit flags registered, the table checks 7", n)
	}
}
