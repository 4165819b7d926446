package model

import (
	"context"
	"errors"
	"time"
)

// RetryPolicy bounds how a failed request is sent again: only before the
// first event streamed (after it, the step has published parts and a
// resend would repeat them, so the failure closes the step instead).
type RetryPolicy struct {
	Attempts int           // tries in all, including the first; <= 1 = no retry
	Base     time.Duration // wait before the second try; doubles each time
	Max      time.Duration // cap of one wait
}

// DefaultRetry: 4 tries, waiting 0.5 s, 1 s, 2 s.
var DefaultRetry = RetryPolicy{Attempts: 4, Base: 500 * time.Millisecond, Max: 8 * time.Second}

// wait is the pause before try n+1 (n >= 1).
func (p RetryPolicy) wait(n int) time.Duration {
	d := p.Base
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	return d
}

// Retrying sends a step again after a retryable Error that came before any
// event, up to the policy's bound. Errors returned by emit (the engine
// stopping the step) pass through untouched and are never retried.
type Retrying struct {
	Provider Provider    // the provider retried
	Policy   RetryPolicy // how often and how long apart
}

// Stream implements Provider, retrying as Policy says.
func (r Retrying) Stream(ctx context.Context, req Request, emit func(Event) error) error {
	for try := 1; ; try++ {
		started := false
		err := r.Provider.Stream(ctx, req, func(ev Event) error {
			started = true
			return emit(ev)
		})
		var me *Error
		if err == nil || started || !errors.As(err, &me) || !me.Retryable || try >= r.Policy.Attempts {
			return err
		}
		timer := time.NewTimer(r.Policy.wait(try))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return context.Cause(ctx)
		}
	}
}

// Unwrap exposes the wrapped provider (its context budget, say).
func (r Retrying) Unwrap() Provider { return r.Provider }
