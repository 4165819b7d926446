//go:build unix

package synccore

import (
	"syscall"
	"time"
)

// cpuNow is the process's user+system CPU time. On a shared, loaded
// machine it is a steadier measure of a benchmark's cost than wall time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
