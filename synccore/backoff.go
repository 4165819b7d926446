package synccore

// backoff limits (docs/protocol.md §6.4).
const (
	backoffBaseMs  = 250
	backoffMaxMs   = 30_000
	defaultJitter  = 500 // used when the host gave no jitter
	maxJitter      = 1000
	maxBackoffStep = 7 // 250 ms << 7 = 32 s, already past the cap
)

// backoffDelay is the delay in milliseconds before reconnect attempt number
// attempt (1, 2, 3... since the client was last live), scaled by the host's
// jitter (0..MaxJitter): min(30 s, 250 ms × 2^(attempt-1)) × (500 + jitter/2) / 1000.
// Attempt 0 is the immediate retry a server-asked resync gets: 0 ms.
// It is pure integer arithmetic, so every host computes the same delay.
func backoffDelay(attempt int, jitter int64) int64 {
	if attempt <= 0 {
		return 0
	}
	jitter = min(max(jitter, 0), maxJitter)
	step := min(attempt-1, maxBackoffStep)
	delay := min(int64(backoffBaseMs)<<step, backoffMaxMs)
	return delay * (500 + jitter/2) / 1000
}
