package msgp

import (
	"encoding/binary"
	"math"
	"sort"
)

// value.go reads and writes the `any` values of parts (tool input and
// output, data, interaction request and response) the way msgpack/v5 does:
// a value decodes to the Go type msgpack/v5's DecodeInterface gives (int8 for
// a fixint, uint16 for a uint16, string, []byte, []any, map[string]any,
// time.Time for a timestamp extension...; time.go), and a value encodes with compact
// ints and sorted map keys. Values of other Go types (structs, typed slices
// and maps) go through encodeOther (reflect.go).

// timeExt is msgpack's timestamp extension type.
const timeExt = -1

// AnyValue reads one value as msgpack/v5's DecodeInterface would. depth
// counts the containers above it; deeper than MaxNesting is refused.
func (d *Decoder) AnyValue(depth int) any {
	if d.bad || depth > MaxNesting {
		d.Fail("msgpack: nested deeper than " + itoa(MaxNesting) + " levels")
		return nil
	}
	c, ok := d.R.Byte()
	if !ok {
		d.Fail("EOF")
		return nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return int8(c)
	case c&0xf0 == 0x80 || c == 0xde || c == 0xdf:
		n := d.lenAfter(c)
		m := make(map[string]any, min(n, 64))
		for range n {
			k := d.SharedString() // keys repeat across the parts of a page
			v := d.AnyValue(depth + 1)
			if d.bad {
				return nil
			}
			m[k] = v
		}
		return m
	case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
		n := d.lenAfter(c)
		s := make([]any, 0, min(n, 64))
		for range n {
			v := d.AnyValue(depth + 1)
			if d.bad {
				return nil
			}
			s = append(s, v)
		}
		return s
	case c&0xe0 == 0xa0 || c == 0xd9 || c == 0xda || c == 0xdb:
		d.R.Pos--
		return d.Str()
	case c == 0xc4 || c == 0xc5 || c == 0xc6:
		d.R.Pos--
		p := d.RawBytes()
		if d.bad {
			return nil
		}
		return append(make([]byte, 0, len(p)), p...) // never nil, like msgpack/v5
	case c == 0xc0:
		return nil
	case c == 0xc2 || c == 0xc3:
		return c == 0xc3
	case c >= 0xd4 && c <= 0xd8 || c >= 0xc7 && c <= 0xc9:
		return d.ext(c)
	}
	var k int
	switch c {
	case 0xcc, 0xd0:
		k = 1
	case 0xcd, 0xd1:
		k = 2
	case 0xce, 0xd2, 0xca:
		k = 4
	case 0xcf, 0xd3, 0xcb:
		k = 8
	default: // 0xc1 is never used
		d.Fail("msgpack: unknown code " + hex8(c) + " decoding interface{}")
		return nil
	}
	p, ok := d.R.Take(k)
	if !ok {
		d.Fail("unexpected EOF")
		return nil
	}
	switch c {
	case 0xcc:
		return p[0]
	case 0xcd:
		return binary.BigEndian.Uint16(p)
	case 0xce:
		return binary.BigEndian.Uint32(p)
	case 0xcf:
		return binary.BigEndian.Uint64(p)
	case 0xd0:
		return int8(p[0])
	case 0xd1:
		return int16(binary.BigEndian.Uint16(p))
	case 0xd2:
		return int32(binary.BigEndian.Uint32(p))
	case 0xd3:
		return int64(binary.BigEndian.Uint64(p))
	case 0xca:
		return math.Float32frombits(binary.BigEndian.Uint32(p))
	default: // 0xcb
		return math.Float64frombits(binary.BigEndian.Uint64(p))
	}
}

// ext reads an extension value: msgpack/v5 knows only the timestamp.
func (d *Decoder) ext(c byte) any {
	var n int
	ok := true
	switch c {
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		n = 1 << (c - 0xd4)
	case 0xc7:
		n, ok = d.R.Length(1)
	case 0xc8:
		n, ok = d.R.Length(2)
	case 0xc9:
		n, ok = d.R.Length(4)
	}
	typ, ok2 := d.R.Byte()
	if !ok || !ok2 {
		d.Fail("unexpected EOF")
		return nil
	}
	if int8(typ) != timeExt {
		d.Fail("msgpack: unknown ext id=" + itoa(int64(int8(typ))))
		return nil
	}
	p, ok := d.R.Take(n)
	if !ok {
		d.Fail("unexpected EOF")
		return nil
	}
	switch n {
	case 4:
		return makeTime(int64(binary.BigEndian.Uint32(p)), 0)
	case 8:
		v := binary.BigEndian.Uint64(p)
		return makeTime(int64(v&0x3ffffffff), int64(v>>34))
	case 12:
		return makeTime(int64(binary.BigEndian.Uint64(p[4:])), int64(binary.BigEndian.Uint32(p)))
	}
	d.Fail("msgpack: invalid ext len=" + itoa(int64(n)) + " decoding time")
	return nil
}

// AppendValue appends v as msgpack/v5 encodes it with compact ints and
// sorted map keys; maps msgpack/v5 would write in iteration order are
// sorted too (by their keys' encoding), so output never depends on it.
func AppendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return AppendNil(b), nil
	case string:
		return AppendString(b, x), nil
	case bool:
		return AppendBool(b, x), nil
	case int8:
		return AppendInt(b, int64(x)), nil
	case int:
		return AppendInt(b, int64(x)), nil
	case int16:
		return AppendInt(b, int64(x)), nil
	case int32:
		return AppendInt(b, int64(x)), nil
	case int64:
		return AppendInt(b, x), nil
	case uint8:
		return AppendUint(b, uint64(x)), nil
	case uint:
		return AppendUint(b, uint64(x)), nil
	case uint16:
		return AppendUint(b, uint64(x)), nil
	case uint32:
		return AppendUint(b, uint64(x)), nil
	case uint64:
		return AppendUint(b, x), nil
	case float32:
		return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(x)), nil
	case float64:
		return AppendFloat64(b, x), nil
	case []byte:
		if x == nil {
			return AppendNil(b), nil
		}
		return AppendBin(b, x), nil
	case []any:
		if x == nil {
			return AppendNil(b), nil
		}
		b = AppendArrayHeader(b, len(x))
		var err error
		for _, e := range x {
			if b, err = AppendValue(b, e); err != nil {
				return b, err
			}
		}
		return b, nil
	case map[string]any:
		if x == nil {
			return AppendNil(b), nil
		}
		b = AppendMapHeader(b, len(x))
		var err error
		for _, k := range SortedKeys(x) {
			if b, err = AppendValue(AppendString(b, k), x[k]); err != nil {
				return b, err
			}
		}
		return b, nil
	case []string:
		if x == nil {
			return AppendNil(b), nil
		}
		b = AppendArrayHeader(b, len(x))
		for _, s := range x {
			b = AppendString(b, s)
		}
		return b, nil
	case map[string]string:
		if x == nil {
			return AppendNil(b), nil
		}
		b = AppendMapHeader(b, len(x))
		for _, k := range SortedKeys(x) {
			b = AppendString(AppendString(b, k), x[k])
		}
		return b, nil
	}
	if b, ok := appendTime(b, v); ok {
		return b, nil
	}
	return encodeOther(b, v)
}

func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Not sort.Strings: it would link slices.Sort's generic code into the
	// wasm module (+21 KB).
	//lint:ignore S1032 see above
	sort.Sort(sort.StringSlice(keys))
	return keys
}

// sortKV sorts encoded map entries by their keys' bytes.
func sortKV(kvs [][2][]byte) {
	sort.Slice(kvs, func(i, j int) bool { return string(kvs[i][0]) < string(kvs[j][0]) })
}

// appendTimestamp writes a time as msgpack/v5 does: the timestamp
// extension in its smallest form.
func appendTimestamp(b []byte, sec int64, nsec int) []byte {
	secs := uint64(sec)
	if secs>>34 == 0 {
		data := uint64(nsec)<<34 | secs
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, 0xd6, 0xff), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xd7, 0xff), data)
	}
	b = append(b, 0xc7, 12, 0xff)
	b = binary.BigEndian.AppendUint32(b, uint32(nsec))
	return binary.BigEndian.AppendUint64(b, secs)
}

// EmptyValue mirrors msgpack/v5's omitempty test for an interface field: a
// nil interface, or a value that is itself empty (0, "", false, an empty
// slice or map, a zero time...).
func EmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int8:
		return x == 0
	case int:
		return x == 0
	case int16:
		return x == 0
	case int32:
		return x == 0
	case int64:
		return x == 0
	case uint8:
		return x == 0
	case uint:
		return x == 0
	case uint16:
		return x == 0
	case uint32:
		return x == 0
	case uint64:
		return x == 0
	case float32:
		return x == 0
	case float64:
		return x == 0
	case []byte:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	case map[string]string:
		return len(x) == 0
	}
	if empty, ok := emptyTime(v); ok {
		return empty
	}
	return emptyOther(v)
}
