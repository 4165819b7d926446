package msgp

import (
	"encoding/binary"
	"math"
)

// wire.go holds the msgpack primitives every encoder and decoder of the
// kit is built from: the generated per-type codec of synccore, its fast
// delta paths and the canonical digest. Every writer emits the smallest
// form, which is what msgpack/v5 writes with UseCompactInts(true), so all
// paths produce identical bytes.

// AppendMapHeader appends a map header for n entries.
func AppendMapHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xde, byte(n>>8), byte(n))
	default:
		return append(b, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendArrayHeader appends an array header for n elements.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	default:
		return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendString appends s as a msgpack str.
func AppendString(b []byte, s string) []byte {
	return append(AppendStrHeader(b, len(s)), s...)
}

// AppendStrHeader appends the header of a msgpack str of n bytes.
func AppendStrHeader(b []byte, n int) []byte {
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

// AppendBin appends p as a msgpack bin.
func AppendBin(b []byte, p []byte) []byte { return append(AppendBinHeader(b, len(p)), p...) }

// AppendBinHeader appends the header of a msgpack bin of n bytes.
func AppendBinHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xc5, byte(n>>8), byte(n))
	default:
		return append(b, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

func AppendNil(b []byte) []byte { return append(b, 0xc0) }

// AppendUint appends n in the smallest unsigned form (positive fixint first).
func AppendUint(b []byte, n uint64) []byte {
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

// AppendInt appends n in the smallest form: non-negative values as unsigned
// (as msgpack/v5 does with compact ints), negative ones as the smallest int.
func AppendInt(b []byte, n int64) []byte {
	if n >= 0 {
		return AppendUint(b, uint64(n))
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

func AppendFloat64(b []byte, f float64) []byte {
	b = append(b, 0xcb)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

// Reader is a bounds-checked msgpack cursor. Every method reports ok=false
// instead of panicking on short or unexpected input; the caller then falls
// back to the full decoder or reports CodeMalformed.
type Reader struct {
	Buf []byte
	Pos int // the next byte to read
	// Shared interns values that repeat across the messages of a page
	// (session, turn and step ids, tool names); nil outside pages.
	Shared map[string]string
}

// Key consumes the exact bytes k (a key with its header), if they come next.
func (r *Reader) Key(k string) bool {
	if len(r.Buf)-r.Pos < len(k) || string(r.Buf[r.Pos:r.Pos+len(k)]) != k {
		return false
	}
	r.Pos += len(k)
	return true
}

// Done reports whether every byte was read.
func (r *Reader) Done() bool { return r.Pos >= len(r.Buf) }

func (r *Reader) Take(k int) ([]byte, bool) {
	if k < 0 || len(r.Buf)-r.Pos < k {
		return nil, false
	}
	p := r.Buf[r.Pos : r.Pos+k]
	r.Pos += k
	return p, true
}

func (r *Reader) Byte() (byte, bool) {
	if r.Pos >= len(r.Buf) {
		return 0, false
	}
	c := r.Buf[r.Pos]
	r.Pos++
	return c, true
}

// length reads a big-endian length of k bytes.
func (r *Reader) Length(k int) (int, bool) {
	p, ok := r.Take(k)
	if !ok {
		return 0, false
	}
	var n uint64
	for _, c := range p {
		n = n<<8 | uint64(c)
	}
	if n > uint64(len(r.Buf)) { // a length can never exceed the input
		return 0, false
	}
	return int(n), true
}

// mapHeader reads a map header.
func (r *Reader) MapHeader() (int, bool) {
	c, ok := r.Byte()
	switch {
	case !ok:
		return 0, false
	case c&0xf0 == 0x80:
		return int(c & 0x0f), true
	case c == 0xde:
		return r.Length(2)
	case c == 0xdf:
		return r.Length(4)
	}
	return 0, false
}

// arrayHeader reads an array header.
func (r *Reader) ArrayHeader() (int, bool) {
	c, ok := r.Byte()
	switch {
	case !ok:
		return 0, false
	case c&0xf0 == 0x90:
		return int(c & 0x0f), true
	case c == 0xdc:
		return r.Length(2)
	case c == 0xdd:
		return r.Length(4)
	}
	return 0, false
}

// str reads a str (or bin) without copying: the slice aliases the input.
func (r *Reader) Str() ([]byte, bool) {
	c, ok := r.Byte()
	if !ok {
		return nil, false
	}
	var n int
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, ok = r.Length(1)
	case c == 0xda || c == 0xc5:
		n, ok = r.Length(2)
	case c == 0xdb || c == 0xc6:
		n, ok = r.Length(4)
	default:
		return nil, false
	}
	if !ok {
		return nil, false
	}
	return r.Take(n)
}

// int reads any msgpack integer as int64 (uint64 above MaxInt64 fails).
func (r *Reader) Int() (int64, bool) {
	c, ok := r.Byte()
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
	p, ok := r.Take(k)
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
func (r *Reader) Skip() bool {
	for pending := 1; pending > 0; pending-- {
		c, ok := r.Byte()
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
			n, ok = r.Length(1)
		case c == 0xda || c == 0xc5:
			n, ok = r.Length(2)
		case c == 0xdb || c == 0xc6:
			n, ok = r.Length(4)
		case c == 0xdc:
			n, ok = r.Length(2)
			pending += n
			n = 0
		case c == 0xdd:
			n, ok = r.Length(4)
			pending += n
			n = 0
		case c == 0xde:
			n, ok = r.Length(2)
			pending += 2 * n
			n = 0
		case c == 0xdf:
			n, ok = r.Length(4)
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
			n, ok = r.Length(1)
			n++
		case c == 0xc8:
			n, ok = r.Length(2)
			n++
		case c == 0xc9:
			n, ok = r.Length(4)
			n++
		default: // 0xc1 is never used
			return false
		}
		if !ok {
			return false
		}
		if _, ok := r.Take(n); !ok {
			return false
		}
	}
	return true
}

// MaxNesting bounds how deep the `any` values of parts may nest: the
// decoder recurses per level, and a hostile input of a million nested
// arrays must be refused, not exhaust the stack. NestingOK tells a
// failed decode's "too deep or truncated" apart from other errors.
const MaxNesting = 64

// NestingOK reports whether b holds complete values nested at most
// MaxNesting deep. It only scans; it never allocates beyond a fixed stack.
func NestingOK(b []byte) bool {
	var stack [MaxNesting + 1]int // remaining elements at each open level
	depth := 0
	r := Reader{Buf: b}
	stack[0] = 1
	for !r.Done() {
		for depth > 0 && stack[depth] == 0 {
			depth--
		}
		if stack[depth] == 0 {
			return true // trailing bytes are the caller's concern
		}
		stack[depth]--
		c := r.Buf[r.Pos]
		var n int
		var ok bool
		switch {
		case c&0xf0 == 0x80:
			r.Pos++
			n, ok = int(c&0x0f)*2, true
		case c&0xf0 == 0x90:
			r.Pos++
			n, ok = int(c&0x0f), true
		case c == 0xdc:
			r.Pos++
			n, ok = r.Length(2)
		case c == 0xdd:
			r.Pos++
			n, ok = r.Length(4)
		case c == 0xde:
			r.Pos++
			n, ok = r.Length(2)
			n *= 2
		case c == 0xdf:
			r.Pos++
			n, ok = r.Length(4)
			n *= 2
		default:
			if !r.Skip() {
				return false
			}
			continue
		}
		if !ok {
			return false
		}
		if n > 0 {
			if depth == MaxNesting {
				return false
			}
			depth++
			stack[depth] = n
		}
	}
	return true
}
