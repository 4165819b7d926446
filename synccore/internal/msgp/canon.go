package msgp

import (
	"bytes"
	"math"
	"sort"
)

// canon.go is the canonical encoding of `any` values behind the digest of
// a view: two hosts, or a client and the server, holding the same logical
// value get the same bytes whatever Go types it arrived as: every integer
// is written in its smallest form, an integral float as that integer, maps
// with their keys sorted by the keys' canonical bytes, and anything else is
// first reduced to plain values through msgpack.

// AppendCanonAny appends v in canonical form.
func AppendCanonAny(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return AppendNil(b)
	case bool:
		return AppendBool(b, x)
	case string:
		return AppendString(b, x)
	case []byte:
		return AppendBin(b, x)
	case int:
		return AppendInt(b, int64(x))
	case int8:
		return AppendInt(b, int64(x))
	case int16:
		return AppendInt(b, int64(x))
	case int32:
		return AppendInt(b, int64(x))
	case int64:
		return AppendInt(b, x)
	case uint:
		return AppendUint(b, uint64(x))
	case uint8:
		return AppendUint(b, uint64(x))
	case uint16:
		return AppendUint(b, uint64(x))
	case uint32:
		return AppendUint(b, uint64(x))
	case uint64:
		return AppendUint(b, x)
	case float32:
		return appendCanonFloat(b, float64(x))
	case float64:
		return appendCanonFloat(b, x)
	case []any:
		b = AppendArrayHeader(b, len(x))
		for _, e := range x {
			b = AppendCanonAny(b, e)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Map order must never leak: sort first. Not sort.Strings, which would
		// link slices.Sort's generic code into the wasm module (+21 KB).
		//lint:ignore S1032 see above
		sort.Sort(sort.StringSlice(keys))
		b = AppendMapHeader(b, len(keys))
		for _, k := range keys {
			b = AppendCanonAny(AppendString(b, k), x[k])
		}
		return b
	case map[any]any:
		type kv struct {
			k []byte
			v any
		}
		kvs := make([]kv, 0, len(x))
		for k, e := range x {
			kvs = append(kvs, kv{AppendCanonAny(nil, k), e})
		}
		sort.Slice(kvs, func(i, j int) bool { return bytes.Compare(kvs[i].k, kvs[j].k) < 0 })
		b = AppendMapHeader(b, len(kvs))
		for _, e := range kvs {
			b = append(b, e.k...)
			b = AppendCanonAny(b, e.v)
		}
		return b
	}
	return AppendCanonAny(b, plainValue(v))
}

// appendCanonFloat writes an integral float as the integer it equals, so a
// value that came through JSON (float64) digests like one that came through
// msgpack (an int).
func appendCanonFloat(b []byte, f float64) []byte {
	if f == math.Trunc(f) && f >= -(1<<63) && f < (1<<63) && !math.IsInf(f, 0) {
		return AppendInt(b, int64(f))
	}
	if f == math.Trunc(f) && f >= 0 && f < (1<<64) {
		return AppendUint(b, uint64(f))
	}
	return AppendFloat64(b, f)
}

// plainValue reduces any other Go value (a struct, a typed slice or map, a
// pointer) to nil, bool, numbers, strings, []any and maps by a msgpack
// round trip; a value msgpack cannot encode digests as its type name.
func plainValue(v any) any {
	if isNilPointer(v) {
		return nil
	}
	b, err := AppendValue(nil, v)
	if err != nil {
		return "!unencodable " + typeName(v)
	}
	d := Decoder{R: Reader{Buf: b}}
	out := d.AnyValue(0)
	if d.Finish("value") != nil {
		return "!undecodable " + typeName(v)
	}
	switch out.(type) {
	case nil, bool, string, []byte, []any, map[string]any, map[any]any, float32, float64,
		int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return out
	}
	return "!unplain " + typeName(out)
}

// HexString is lower-case hex (encoding/hex would link fmt into the module).
func HexString(p []byte) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*len(p))
	for i, c := range p {
		b[2*i], b[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(b)
}
