//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Now is the process's user+system CPU time, or 0 where it cannot be read.
func Now() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
