//go:build unix

package core

import (
	"runtime"

	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sys/unix"
)

// memory_unix.go backs each instance's linear memory with address space
// reserved once (mmap PROT_NONE) and committed as the module grows it
// (mprotect), as ncruces/go-sqlite3 does for SQLite's memory. wazero's
// default allocator grows a memory by allocating a new Go slice and copying
// the old one: a module that grows to 90 MB in steps leaves hundreds of MB
// of garbage to the host's heap and costs a copy per step. Here growth
// copies nothing and the memory lives outside the Go heap.

// reservedMemory is a linear memory in a reserved mapping.
type reservedMemory struct {
	buf       []byte // the whole reservation
	committed int    // bytes readable and writable
}

// newMemoryAllocator returns the allocator instances are started with.
func newMemoryAllocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		// max is the module's limit (the runtime's MemoryLimitPages). A
		// reservation costs address space, not memory.
		buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
		if err != nil {
			return nil // wazero then falls back to failing the instantiation
		}
		m := &reservedMemory{buf: buf}
		// Unmapped only once nothing can reach the memory: wazero runs
		// the compiled code of a module closed under a caller (Runtime.Close
		// while a core is in use) without a check, and a load from an
		// unmapped page would crash the process instead of reading zeros.
		runtime.AddCleanup(m, func(buf []byte) { _ = unix.Munmap(buf) }, buf)
		return m
	})
}

// Reallocate implements experimental.LinearMemory: it commits pages up to
// size and returns the memory's bytes, always at the same address.
func (m *reservedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if n := int(size); n > m.committed {
		page := unix.Getpagesize()
		end := (n + page - 1) / page * page
		if end > len(m.buf) {
			end = len(m.buf)
		}
		if err := unix.Mprotect(m.buf[m.committed:end], unix.PROT_READ|unix.PROT_WRITE); err != nil {
			return nil
		}
		m.committed = end
	}
	return m.buf[:size:size]
}

// Free implements experimental.LinearMemory: the pages go back to the
// system at once, the mapping stays (reading zeros) until the cleanup.
func (m *reservedMemory) Free() {
	if m.committed > 0 {
		_ = unix.Madvise(m.buf[:m.committed], unix.MADV_DONTNEED)
	}
}
