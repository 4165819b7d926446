//go:build wasm

package msgp

// time_wasm.go: the module holds a msgpack timestamp as a timestamp (the
// time package would add ~100 KB to the module). Nothing in the core reads
// a time; it only has to write it back as msgpack/v5 would, which this
// does (time.Unix's normalisation included).
type timestamp struct {
	sec  int64
	nsec int64 // 0 <= nsec < 1e9
}

// zeroSec is the Unix second of Go's zero time (January 1, year 1).
const zeroSec = -62135596800

func makeTime(sec, nsec int64) any {
	sec += nsec / 1e9
	nsec %= 1e9
	return timestamp{sec, nsec}
}

func appendTime(b []byte, v any) ([]byte, bool) {
	t, ok := v.(timestamp)
	if !ok {
		return b, false
	}
	return appendTimestamp(b, t.sec, int(t.nsec)), true
}

func emptyTime(v any) (empty, ok bool) {
	t, ok := v.(timestamp)
	return ok && t.sec == zeroSec && t.nsec == 0, ok
}
