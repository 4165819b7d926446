package session

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// BenchmarkLoadedSession is what a session costs in memory while loaded
// (heap bytes, after one short exchange, with the idle timeout off) and
// what it costs to bring back once evicted: ns/op of a use that loads it
// from the store, beside a use of a loaded one (Loaded/hit). rss is the
// resident memory per loaded session (Linux).
func BenchmarkLoadedSession(b *testing.B) {
	const n = 1000
	e := newEnv(b, Config{})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.session("")
		e.post(ids[i], "hello")
	}
	for e.m.running.Load() != 0 {
		time.Sleep(time.Millisecond)
	}
	use := func(sid string) {
		s, err := e.m.session(e.ctx, sid)
		if err != nil {
			b.Fatal(err)
		}
		e.m.release(s)
	}
	evictAll := func() { e.m.evictIdle(time.Now().Add(time.Hour)) }

	b.Run("heap", func(b *testing.B) {
		var before, after runtime.MemStats
		for b.Loop() {
			evictAll()
			runtime.GC()
			runtime.ReadMemStats(&before)
			for _, sid := range ids {
				use(sid)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
		}
		if e.m.Loaded() != n {
			b.Fatalf("%d loaded, want %d", e.m.Loaded(), n)
		}
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-bytes/session")
		b.ReportMetric(0, "ns/op")
	})
	// The resident memory the process gains per loaded session: the heap
	// above plus what the runtime keeps around it (spans, fragmentation).
	b.Run("rss", func(b *testing.B) {
		var before, after int64
		for b.Loop() {
			evictAll()
			debug.FreeOSMemory()
			var err error
			if before, err = residentBytes(); err != nil {
				b.Fatal(err)
			}
			for _, sid := range ids {
				use(sid)
			}
			runtime.GC()
			if after, err = residentBytes(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(after-before)/n, "rss-bytes/session")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("reload", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			evictAll()
			b.StartTimer()
			use(ids[i%n])
			i++
		}
	})
	b.Run("hit", func(b *testing.B) {
		use(ids[0])
		for b.Loop() {
			use(ids[0])
		}
	})
}
