package main

import (
	"errors"
	"flag"

	"github.com/agentsync/agentsync/server"
)

// clientLimits are the flags bounding one client (a principal, or an IP
// address where everyone is the one shared principal); 0 turns a bound
// off.
type clientLimits struct {
	rate             float64
	burst            int
	subsPerSession   int
	subsPerPrincipal int
}

func (c *clientLimits) register(fs *flag.FlagSet) {
	fs.Float64Var(&c.rate, "rate-limit", server.DefaultRequestsPerSecond, "requests per second of one client, sustained; over it: 429 rate_limited with Retry-After (0 = no limit)")
	fs.IntVar(&c.burst, "rate-burst", server.DefaultRequestBurst, "requests one client may send at once on top of -rate-limit")
	fs.IntVar(&c.subsPerSession, "max-subscribers-per-session", server.DefaultSubscribersPerSession, "open subscriptions of one session (0 = no bound)")
	fs.IntVar(&c.subsPerPrincipal, "max-subscribers-per-principal", server.DefaultSubscribersPerPrincipal, "open subscriptions of one client (0 = no bound)")
}

func (c *clientLimits) check() error {
	if c.rate < 0 || c.burst < 0 || c.subsPerSession < 0 || c.subsPerPrincipal < 0 {
		return errors.New("-rate-limit, -rate-burst and -max-subscribers-* must not be negative")
	}
	if c.rate > 0 && c.burst == 0 {
		return errors.New("-rate-burst must be at least 1 with -rate-limit")
	}
	return nil
}

// apply sets the bounds on l; a flag's 0 is the library's "no bound" (-1).
func (c *clientLimits) apply(l server.Limits) server.Limits {
	off := func(v int) int {
		if v == 0 {
			return -1
		}
		return v
	}
	l.RequestsPerSecond, l.RequestBurst = c.rate, off(c.burst)
	if c.rate == 0 {
		l.RequestsPerSecond = -1
	}
	l.SubscribersPerSession, l.SubscribersPerPrincipal = off(c.subsPerSession), off(c.subsPerPrincipal)
	return l
}
