package main

import (
	"runtime"
	"runtime/metrics"
)

// gc.go: the module collects its garbage itself, at the end of an export.
//
// Go's garbage collector is concurrent: a cycle starts when the heap has
// grown enough and finishes through background mark workers. In a reactor
// module those workers are goroutines that run only while an export is
// running and the calling goroutine blocks, which a sans-IO core never does:
// a cycle that starts may never finish, no garbage is freed meanwhile, and
// linear memory (which never shrinks) grows by every byte allocated. The Go
// host measured 1.2 GB of module memory following a 100,000-character answer
// that way. So exports end with collectIfDue, which runs a whole, blocking
// runtime.GC (it also finishes a cycle left stuck) once the bytes allocated
// since the last one pass half the live heap or a floor, whichever is
// larger: sooner than the automatic collector would start a cycle, so the
// heap stays within about 1.5 times what the core holds, and the collection
// work per byte allocated stays constant. (runtime/debug.SetGCPercent(-1)
// would say it more directly, but linking runtime/debug pulls os and fmt
// into the module: 430 KB.)

const (
	// gcFloor is the least allocation between two collections: below it a
	// collection costs more than the memory it frees is worth.
	gcFloor = 2 << 20
	// checkEvery is the estimated allocation between two reads of the
	// allocator's statistics (a read costs microseconds; a delta about
	// one).
	checkEvery = 256 << 10
)

var (
	allocsAtGC uint64 // cumulative bytes allocated at the last collection
	liveAtGC   uint64 // live heap after it
	// estimate is what the calls since the last check may have allocated:
	// their input and output bytes, a constant per call, and for the calls
	// that read the whole view (view, digest) the view's size.
	estimate int
	// heapStats reads the allocator's figures through runtime/metrics,
	// which does not stop the world: runtime.ReadMemStats did, and cost up
	// to 18 ms of a call in a browser with a long answer's heap.
	heapStats = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/live:bytes"}}
)

// collectIfDue is called at the end of every export with an estimate of
// what it allocated; it reads the real figure once the estimates add up.
func collectIfDue(allocated int) {
	estimate += allocated + 256
	if estimate < checkEvery {
		return
	}
	estimate = 0
	metrics.Read(heapStats)
	if heapStats[0].Value.Uint64()-allocsAtGC < max(gcFloor, liveAtGC/2) {
		return
	}
	trimBuffers()
	runtime.GC()
	metrics.Read(heapStats)
	allocsAtGC, liveAtGC = heapStats[0].Value.Uint64(), heapStats[1].Value.Uint64()
}

// trimBuffers drops reused buffers that one large call made large, so a
// collection can free them: a whole long message read once must not pin
// its size for the life of the instance.
func trimBuffers() {
	const keep = 1 << 20
	// The alloc buffer is not among them: the host may still write into it
	// (agentsync_alloc lets it go instead).
	for _, b := range []*[]byte{&handleOut, &changesOut} {
		if cap(*b) > keep {
			*b = nil
		}
	}
}
