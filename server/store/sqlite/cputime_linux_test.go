package sqlite

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time the calling OS thread has used. Benchmarks lock
// their goroutine to a thread and report it next to wall time: on a shared
// 2-core machine wall time mostly measures the neighbours, CPU time
// measures the code (SQLite runs in the calling goroutine).
func threadCPU() time.Duration {
	const clockThreadCPUTimeID = 3 // CLOCK_THREAD_CPUTIME_ID: precise, unlike getrusage's ticks
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
