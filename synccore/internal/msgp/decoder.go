package msgp

import (
	"errors"
	"strconv"
)

// decoder.go is the msgpack decoder the generated per-type code of
// synccore (codec_gen.go) is written in. With it, that code accepts what
// msgpack/v5's reflective decoder accepts for the same structs and gives
// the same values: keys in any order, unknown keys skipped, nil for any
// field (its zero value), str or bin for strings, any integer form for ints
// (uint64 wraps into int64 as in msgpack/v5), the array form of a struct,
// and `any` values as in value.go. Its error messages are msgpack/v5's, so
// outputs that carry them are unchanged.
//
// The decoder never panics: every read is bounds-checked, and `any` values
// nest at most MaxNesting deep.

// Decoder is a Reader that remembers its first failure; after one, every
// method returns zero values, and loops stop on Failed.
type Decoder struct {
	R   Reader
	bad bool
	msg string
	// Alias lets Bytes alias the input (HandleBytes copies what it keeps);
	// otherwise decoded bytes are owned.
	Alias bool
}

// Failed reports whether a read failed; every later read is a no-op.
func (d *Decoder) Failed() bool { return d.bad }

// Fail records the first failure.
func (d *Decoder) Fail(msg string) {
	if !d.bad {
		d.bad, d.msg = true, msg
	}
}

// Finish says what is wrong with the input, if anything, once one value of
// the shape named what was read: the first failure, or bytes left over.
func (d *Decoder) Finish(what string) error {
	if d.bad {
		if !NestingOK(d.R.Buf) {
			return errors.New(what + ": nested deeper than " + itoa(MaxNesting) + " levels or truncated")
		}
		return errors.New(what + ": " + d.msg)
	}
	if !d.R.Done() {
		return errors.New(what + ": " + itoa(int64(len(d.R.Buf)-d.R.Pos)) + " trailing bytes")
	}
	return nil
}

func (d *Decoder) code() (byte, bool) {
	if d.bad {
		return 0, false
	}
	c, ok := d.R.Byte()
	if !ok {
		d.Fail("EOF")
	}
	return c, ok
}

// lenAfter reads the length of the map or array whose code c was just read.
func (d *Decoder) lenAfter(c byte) int {
	var n int
	ok := true
	switch c {
	case 0xdc, 0xde:
		n, ok = d.R.Length(2)
	case 0xdd, 0xdf:
		n, ok = d.R.Length(4)
	default:
		n = int(c & 0x0f)
	}
	if !ok {
		d.Fail("unexpected EOF")
		return 0
	}
	return n
}

// RawBytes reads a str, bin or nil (nil: no bytes), aliasing the input.
func (d *Decoder) RawBytes() []byte {
	c, ok := d.code()
	if !ok {
		return nil
	}
	var n int
	switch {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xc0:
		return nil
	case c == 0xd9 || c == 0xc4:
		n, ok = d.R.Length(1)
	case c == 0xda || c == 0xc5:
		n, ok = d.R.Length(2)
	case c == 0xdb || c == 0xc6:
		n, ok = d.R.Length(4)
	default:
		d.Fail("msgpack: invalid code=" + hex8(c) + " decoding string/bytes length")
		return nil
	}
	var p []byte
	if ok {
		p, ok = d.R.Take(n)
	}
	if !ok {
		d.Fail("unexpected EOF")
	}
	return p
}

// Str reads a string field (str, bin or nil). Well-known values (types,
// states, roles, event and frame names) come back as constants, without
// allocating.
func (d *Decoder) Str() string {
	return Intern(d.RawBytes())
}

// SharedString is Str for a field whose values repeat across a page (the
// fields tagged codec:"shared"): each distinct short value is allocated
// once per Reader.Shared table.
func (d *Decoder) SharedString() string {
	if d.R.Shared == nil || d.R.Pos >= len(d.R.Buf) || d.R.Buf[d.R.Pos]&0xe0 != 0xa0 {
		return d.Str()
	}
	b := d.RawBytes()
	if s, ok := d.R.Shared[string(b)]; ok {
		return s
	}
	s := Intern(b)
	d.R.Shared[s] = s
	return s
}

// Intern returns b as a string, a constant for the protocol's common words.
func Intern(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case "text":
		return "text"
	case "reasoning":
		return "reasoning"
	case "tool":
		return "tool"
	case "done":
		return "done"
	case "streaming":
		return "streaming"
	case "agent":
		return "agent"
	case "user":
		return "user"
	case "visible":
		return "visible"
	case "internal":
		return "internal"
	case "frames":
		return "frames"
	case "delta":
		return "delta"
	case "part":
		return "part"
	case "message":
		return "message"
	case "start":
		return "start"
	case "page":
		return "page"
	case "timer_fired":
		return "timer_fired"
	case "connection_lost":
		return "connection_lost"
	case "subscription_opened":
		return "subscription_opened"
	}
	return string(b)
}

// Key reads a map key (aliasing the input) for a switch.
func (d *Decoder) Key() []byte { return d.RawBytes() }

// Bytes reads a []byte field: nil stays nil, an empty str or bin is an
// empty, non-nil slice (as msgpack/v5 gives).
func (d *Decoder) Bytes() []byte {
	if d.R.Pos < len(d.R.Buf) && d.R.Buf[d.R.Pos] == 0xc0 {
		d.R.Pos++
		return nil
	}
	p := d.RawBytes()
	if d.bad {
		return nil
	}
	if d.Alias && len(p) > 0 {
		return p
	}
	return append(make([]byte, 0, len(p)), p...)
}

// U64 reads any integer (or nil) as msgpack/v5's DecodeUint64 does:
// negative values wrap.
func (d *Decoder) U64() uint64 {
	c, ok := d.code()
	if !ok {
		return 0
	}
	u, ok := d.intAfter(c)
	if !ok {
		d.Fail("msgpack: invalid code=" + hex8(c) + " decoding uint64")
	}
	return u
}

// I64 reads any integer (or nil) as msgpack/v5's DecodeInt64 does: a
// uint64 above MaxInt64 wraps.
func (d *Decoder) I64() int64 {
	c, ok := d.code()
	if !ok {
		return 0
	}
	u, ok := d.intAfter(c)
	if !ok {
		d.Fail("msgpack: invalid code=" + hex8(c) + " decoding int64")
	}
	return int64(u)
}

// intAfter reads the integer whose code c was read, as the two's
// complement bits of an int64; ok is false for a code that is no integer.
func (d *Decoder) intAfter(c byte) (uint64, bool) {
	switch {
	case c <= 0x7f || c >= 0xe0:
		return uint64(int64(int8(c))), true
	case c == 0xc0:
		return 0, true
	}
	var k int
	switch c {
	case 0xcc, 0xd0:
		k = 1
	case 0xcd, 0xd1:
		k = 2
	case 0xce, 0xd2:
		k = 4
	case 0xcf, 0xd3:
		k = 8
	default:
		return 0, false
	}
	p, ok := d.R.Take(k)
	if !ok {
		d.Fail("unexpected EOF")
		return 0, true
	}
	var u uint64
	for _, x := range p {
		u = u<<8 | uint64(x)
	}
	if c >= 0xd0 { // signed: extend the sign
		shift := uint(64 - 8*k)
		u = uint64(int64(u<<shift) >> shift)
	}
	return u, true
}

// Bool reads a bool (nil is false).
func (d *Decoder) Bool() bool {
	c, ok := d.code()
	switch {
	case !ok:
		return false
	case c == 0xc3:
		return true
	case c == 0xc2 || c == 0xc0:
		return false
	}
	d.Fail("msgpack: invalid code=" + hex8(c) + " decoding bool")
	return false
}

// ArrayLen reads an array header; nil is -1.
func (d *Decoder) ArrayLen() int {
	c, ok := d.code()
	switch {
	case !ok:
		return 0
	case c == 0xc0:
		return -1
	case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
		return d.lenAfter(c)
	}
	d.Fail("msgpack: invalid code=" + hex8(c) + " decoding array length")
	return 0
}

// IsNil consumes a nil if one comes next.
func (d *Decoder) IsNil() bool {
	if !d.bad && d.R.Pos < len(d.R.Buf) && d.R.Buf[d.R.Pos] == 0xc0 {
		d.R.Pos++
		return true
	}
	return false
}

// StructLen reads the header of a struct of nfields fields: a map of n
// keys; nil or an empty array, the zero struct; or msgpack/v5's array form,
// one value per field in declared order (arr).
func (d *Decoder) StructLen(nfields int) (n int, arr, zero bool) {
	c, ok := d.code()
	switch {
	case !ok:
		return 0, false, false
	case c&0xf0 == 0x80 || c == 0xde || c == 0xdf:
		return d.lenAfter(c), false, false
	case c == 0xc0:
		return 0, false, true
	case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
		n = d.lenAfter(c)
		if n == 0 {
			return 0, false, true
		}
		if n != nfields {
			d.Fail("msgpack: number of fields in array-encoded struct has changed")
			return 0, false, false
		}
		return n, true, false
	}
	d.Fail("msgpack: unexpected code=" + hex8(c) + " decoding map length")
	return 0, false, false
}

// FieldKey returns the key of entry i of a struct: read from the map, or
// the declared field name in the array form.
func (d *Decoder) FieldKey(arr bool, names [][]byte, i int) []byte {
	if arr {
		return names[i]
	}
	return d.Key()
}

// Skip steps over one value of any type.
func (d *Decoder) Skip() {
	if !d.bad && !d.R.Skip() {
		d.Fail("unexpected EOF")
	}
}

// KeyList turns field names into the byte keys FieldKey hands out.
func KeyList(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = []byte(n)
	}
	return out
}

// itoa formats an int for error messages (strconv is linked anyway; fmt is
// kept out of the WebAssembly module).
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// hex8 formats a byte as msgpack/v5's error messages do (%x).
func hex8(c byte) string {
	const digits = "0123456789abcdef"
	if c < 16 {
		return digits[c : c+1]
	}
	return string([]byte{digits[c>>4], digits[c&15]})
}
