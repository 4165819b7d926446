//go:build !wasm

package msgp

import "time"

// time.go: a msgpack timestamp decodes to a time.Time, as msgpack/v5 gives
// (in the local zone; the zero time in UTC). The WebAssembly module holds
// it as a timestamp instead (time_wasm.go), so the module does not link the
// time package; both encode it back to the same bytes.

func makeTime(sec, nsec int64) any {
	tm := time.Unix(sec, nsec)
	if tm.IsZero() {
		tm = tm.UTC() // as msgpack/v5: the zero time has no zone
	}
	return tm
}

// appendTime writes v if it is a time.
func appendTime(b []byte, v any) ([]byte, bool) {
	t, ok := v.(time.Time)
	if !ok {
		return b, false
	}
	return appendTimestamp(b, t.Unix(), t.Nanosecond()), true
}

// emptyTime is msgpack/v5's omitempty for a time: the zero time.
func emptyTime(v any) (empty, ok bool) {
	t, ok := v.(time.Time)
	return ok && t.IsZero(), ok
}
