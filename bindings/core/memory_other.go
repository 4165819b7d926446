//go:build !unix

package core

import "github.com/tetratelabs/wazero/experimental"

// newMemoryAllocator is wazero's default (a Go slice, copied on growth)
// where address space cannot be reserved the unix way.
func newMemoryAllocator() experimental.MemoryAllocator { return nil }
