package bindings

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentsync/agentsync/synccore"
)

// send.go retries a post that may not have arrived. With an
// Idempotency-Key a retry can never post twice (the server answers it with
// the message it committed), so the host may retry whenever it cannot tell
// whether the post was committed — the connection failed before the
// answer — and whenever the server asked it to come back later: 429
// rate_limited and 503 closed (draining, or another node did not answer in
// time), after their Retry-After.

// DefaultSendRetries is how many times SendWith sends a post again.
const DefaultSendRetries = 3

const (
	firstSendBackoff = 250 * time.Millisecond
	// maxRetryAfter caps the wait a server may ask for: past it the caller
	// hears the error rather than waiting on, unseen.
	maxRetryAfter = 30 * time.Second
)

// parseRetryAfter is a Retry-After header's wait (whole seconds, §3), 0
// without one.
func parseRetryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// retried runs attempt until it succeeds, fails for good, or retries
// (DefaultSendRetries when 0, none when negative) are spent; it waits
// between attempts as sendWait says, and gives up when ctx ends. attempt
// reports an answer's Retry-After through its argument.
func retried(ctx context.Context, retries int, attempt func(retryAfter *time.Duration) error) error {
	if retries == 0 {
		retries = DefaultSendRetries
	}
	for n := 0; ; n++ {
		var after time.Duration
		err := attempt(&after)
		wait, again := sendWait(err, after, n)
		if !again || n >= retries || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// sendWait says whether the n-th attempt of a post, failed with err
// (after, the answer's Retry-After), is sent again, and after how long:
// the server's Retry-After (at most maxRetryAfter), else a backoff
// doubling from firstSendBackoff.
func sendWait(err error, after time.Duration, n int) (time.Duration, bool) {
	if err == nil {
		return 0, false
	}
	backoff := firstSendBackoff << min(n, 6)
	var te *NetworkError
	if errors.As(err, &te) {
		return backoff, true
	}
	var se *synccore.Error
	if !errors.As(err, &se) || se.Code != synccore.CodeRateLimited && se.Code != synccore.CodeClosed {
		return 0, false
	}
	switch {
	case after > maxRetryAfter:
		return 0, false
	case after > 0:
		return after, true
	}
	return backoff, true
}

// retriedRefusals is retried for a request that must not be sent twice
// (an answer, an action): only a refusal the server made for now (429
// rate_limited, 503 closed) is sent again, DefaultSendRetries times at
// most; a request whose answer was lost (NetworkError) is not, since it
// may have been served.
func retriedRefusals(ctx context.Context, attempt func(retryAfter *time.Duration) error) error {
	var lost error
	err := retried(ctx, 0, func(retryAfter *time.Duration) error {
		err := attempt(retryAfter)
		var te *NetworkError
		if errors.As(err, &te) {
			lost = err
			return nil // ends the retries; lost is the answer
		}
		return err
	})
	if lost != nil {
		return lost
	}
	return err
}

// newIdempotencyKey is a random key for one post and its retries.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
