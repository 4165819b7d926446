package synccore

import (
	"encoding/binary"
	"math"
)

// wire.go holds the msgpack primitives shared by the codec (encode.go,
// decode.go, output.go), the delta paths and the canonical digest encoder. Every writer emits the smallest form, which is what msgpack/v5
// writes with UseCompactInts(true), so both paths produce identical bytes.

// appendMapHeader appends a map header for n entries.
func appendMapHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xde, byte(n>>8), byte(n))
	default:
		return append(b, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// appendArrayHeader appends an array header for n elements.
func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	default:
		return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// appendString appends s as a msgpack str.
func appendString(b []byte, s string) []byte {
	return append(appendStrHeader(b, len(s)), s...)
}

// appendStrHeader appends the header of a msgpack str of n bytes.
func appendStrHeader(b []byte, n int) []byte {
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return b
}

// appendBin appends p as a msgpack bin.
func appendBin(b []byte, p []byte) []byte {
	n := len(p)
	switch {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xc5, byte(n>>8), byte(n))
	default:
		b = append(b, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, p...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

func appendNil(b []byte) []byte { return append(b, 0xc0) }

// appendUint appends n in the smallest unsigned form (positive fixint first).
func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= 0x7f:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, 0xce, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		b = append(b, 0xcf)
		return binary.BigEndian.AppendUint64(b, n)
	}
}

// appendInt appends n in the smallest form: non-negative values as unsigned
// (as msgpack/v5 does with compact ints), negative ones as the smallest int.
func appendInt(b []byte, n int64) []byte {
	if n >= 0 {
		return appendUint(b, uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return append(b, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(b, 0xd2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		b = append(b, 0xd3)
		return binary.BigEndian.AppendUint64(b, uint64(n))
	}
}

func appendFloat64(b []byte, f float64) []byte {
	b = append(b, 0xcb)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

// reader is a bounds-checked msgpack cursor. Every method reports ok=false
// instead of panicking on short or unexpected input; the caller then falls
// back to the full decoder or reports CodeMalformed.
type reader struct {
	b []byte
	i int
	// shared interns values that repeat across the messages of a page
	// (session, turn and step ids, tool names); nil outside pages.
	shared map[string]string
}

func (r *reader) done() bool { return r.i >= len(r.b) }

func (r *reader) n(k int) ([]byte, bool) {
	if k < 0 || len(r.b)-r.i < k {
		return nil, false
	}
	p := r.b[r.i : r.i+k]
	r.i += k
	return p, true
}

func (r *reader) byte1() (byte, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	c := r.b[r.i]
	r.i++
	return c, true
}

// length reads a big-endian length of k bytes.
func (r *reader) length(k int) (int, bool) {
	p, ok := r.n(k)
	if !ok {
		return 0, false
	}
	var n uint64
	for _, c := range p {
		n = n<<8 | uint64(c)
	}
	if n > uint64(len(r.b)) { // a length can never exceed the input
		return 0, false
	}
	return int(n), true
}

// mapHeader reads a map header.
func (r *reader) mapHeader() (int, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return 0, false
	case c&0xf0 == 0x80:
		return int(c & 0x0f), true
	case c == 0xde:
		return r.length(2)
	case c == 0xdf:
		return r.length(4)
	}
	return 0, false
}

// arrayHeader reads an array header.
func (r *reader) arrayHeader() (int, bool) {
	c, ok := r.byte1()
	switch {
	case !ok:
		return 0, false
	case c&0xf0 == 0x90:
		return int(c & 0x0f), true
	case c == 0xdc:
		return r.length(2)
	case c == 0xdd:
		return r.length(4)
	}
	return 0, false
}

// str reads a str (or bin) without copying: the slice aliases the input.
func (r *reader) str() ([]byte, bool) {
	c, ok := r.byte1()
	if !ok {
		return nil, false
	}
	var n int
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, ok = r.length(1)
	case c == 0xda || c == 0xc5:
		n, ok = r.length(2)
	case c == 0xdb || c == 0xc6:
		n, ok = r.length(4)
	default:
		return nil, false
	}
	if !ok {
		return nil, false
	}
	return r.n(n)
}

// int reads any msgpack integer as int64 (uint64 above MaxInt64 fails).
func (r *reader) int() (int64, bool) {
	c, ok := r.byte1()
	if !ok {
		return 0, false
	}
	switch {
	case c <= 0x7f:
		return int64(c), true
	case c >= 0xe0:
		return int64(int8(c)), true
	}
	var k int
	signed := false
	switch c {
	case 0xcc:
		k = 1
	case 0xcd:
		k = 2
	case 0xce:
		k = 4
	case 0xcf:
		k = 8
	case 0xd0:
		k, signed = 1, true
	case 0xd1:
		k, signed = 2, true
	case 0xd2:
		k, signed = 4, true
	case 0xd3:
		k, signed = 8, true
	default:
		return 0, false
	}
	p, ok := r.n(k)
	if !ok {
		return 0, false
	}
	var u uint64
	for _, x := range p {
		u = u<<8 | uint64(x)
	}
	if signed {
		shift := uint(64 - 8*k)
		return int64(u<<shift) >> shift, true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// skip steps over one complete value of any type, iteratively (no
// recursion, so hostile nesting cannot exhaust the stack).
func (r *reader) skip() bool {
	for pending := 1; pending > 0; pending-- {
		c, ok := r.byte1()
		if !ok {
			return false
		}
		var n int
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
			continue
		case c&0xf0 == 0x80:
			pending += 2 * int(c&0x0f)
			continue
		case c&0xf0 == 0x90:
			pending += int(c & 0x0f)
			continue
		case c&0xe0 == 0xa0:
			n = int(c & 0x1f)
		case c == 0xcc || c == 0xd0:
			n = 1
		case c == 0xcd || c == 0xd1:
			n = 2
		case c == 0xce || c == 0xd2 || c == 0xca:
			n = 4
		case c == 0xcf || c == 0xd3 || c == 0xcb:
			n = 8
		case c == 0xd9 || c == 0xc4:
			n, ok = r.length(1)
		case c == 0xda || c == 0xc5:
			n, ok = r.length(2)
		case c == 0xdb || c == 0xc6:
			n, ok = r.length(4)
		case c == 0xdc:
			n, ok = r.length(2)
			pending += n
			n = 0
		case c == 0xdd:
			n, ok = r.length(4)
			pending += n
			n = 0
		case c == 0xde:
			n, ok = r.length(2)
			pending += 2 * n
			n = 0
		case c == 0xdf:
			n, ok = r.length(4)
			pending += 2 * n
			n = 0
		case c == 0xd4:
			n = 2
		case c == 0xd5:
			n = 3
		case c == 0xd6:
			n = 5
		case c == 0xd7:
			n = 9
		case c == 0xd8:
			n = 17
		case c == 0xc7:
			n, ok = r.length(1)
			n++
		case c == 0xc8:
			n, ok = r.length(2)
			n++
		case c == 0xc9:
			n, ok = r.length(4)
			n++
		default: // 0xc1 is never used
			return false
		}
		if !ok {
			return false
		}
		if _, ok := r.n(n); !ok {
			return false
		}
	}
	return true
}

// maxNesting bounds how deep the `any` values of parts may nest: the
// decoder recurses per level, and a hostile input of a million nested
// arrays must be refused, not exhaust the stack. nestingOK tells a
// failed decode's "too deep or truncated" apart from other errors.
const maxNesting = 64

// nestingOK reports whether b holds complete values nested at most
// maxNesting deep. It only scans; it never allocates beyond a fixed stack.
func nestingOK(b []byte) bool {
	var stack [maxNesting + 1]int // remaining elements at each open level
	depth := 0
	r := reader{b: b}
	stack[0] = 1
	for !r.done() {
		for depth > 0 && stack[depth] == 0 {
			depth--
		}
		if stack[depth] == 0 {
			return true // trailing bytes are the caller's concern
		}
		stack[depth]--
		c := r.b[r.i]
		var n int
		var ok bool
		switch {
		case c&0xf0 == 0x80:
			r.i++
			n, ok = int(c&0x0f)*2, true
		case c&0xf0 == 0x90:
			r.i++
			n, ok = int(c&0x0f), true
		case c == 0xdc:
			r.i++
			n, ok = r.length(2)
		case c == 0xdd:
			r.i++
			n, ok = r.length(4)
		case c == 0xde:
			r.i++
			n, ok = r.length(2)
			n *= 2
		case c == 0xdf:
			r.i++
			n, ok = r.length(4)
			n *= 2
		default:
			if !r.skip() {
				return false
			}
			continue
		}
		if !ok {
			return false
		}
		if n > 0 {
			if depth == maxNesting {
				return false
			}
			depth++
			stack[depth] = n
		}
	}
	return true
}
