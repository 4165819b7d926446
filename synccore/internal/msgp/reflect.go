//go:build !wasm

package msgp

import (
	"errors"
	"reflect"
	"strings"
	"time"
)

// reflect.go writes `any` values of Go types the hand codec does not name:
// a server may put its own structs, typed slices or maps in a part. It
// follows msgpack/v5's rules for them (struct fields by their msgpack tag
// or Go name, "-" skipped, omitempty, untagged embedded structs inlined,
// []byte and [N]byte as bin), with every map sorted so output never depends
// on map order. Values decoded by this package never get here: in the
// WebAssembly core only the host's own Go values could, and it has none.

func encodeOther(b []byte, v any) ([]byte, error) {
	return appendReflect(b, reflect.ValueOf(v), 0)
}

func appendReflect(b []byte, rv reflect.Value, depth int) ([]byte, error) {
	if depth > MaxNesting {
		return b, errors.New("encode: value nested deeper than " + itoa(MaxNesting) + " levels")
	}
	if !rv.IsValid() {
		return AppendNil(b), nil
	}
	if rv.Type() == timeType {
		b, _ = appendTime(b, rv.Interface())
		return b, nil
	}
	var err error
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return AppendNil(b), nil
		}
		if rv.Kind() == reflect.Interface && rv.Type() == errorType {
			return AppendString(b, rv.Interface().(error).Error()), nil
		}
		if rv.Kind() == reflect.Interface {
			return AppendValue(b, rv.Elem().Interface())
		}
		return appendReflect(b, rv.Elem(), depth+1)
	case reflect.Bool:
		return AppendBool(b, rv.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return AppendInt(b, rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return AppendUint(b, rv.Uint()), nil
	case reflect.Float32:
		return AppendValue(b, float32(rv.Float()))
	case reflect.Float64:
		return AppendFloat64(b, rv.Float()), nil
	case reflect.String:
		return AppendString(b, rv.String()), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return AppendNil(b), nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			p := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(p), rv)
			return AppendBin(b, p), nil
		}
		b = AppendArrayHeader(b, rv.Len())
		for i := range rv.Len() {
			if b, err = appendReflect(b, rv.Index(i), depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	case reflect.Map:
		if rv.IsNil() {
			return AppendNil(b), nil
		}
		kvs := make([][2][]byte, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			var kv [2][]byte
			if kv[0], err = appendReflect(nil, it.Key(), depth+1); err != nil {
				return b, err
			}
			if kv[1], err = appendReflect(nil, it.Value(), depth+1); err != nil {
				return b, err
			}
			kvs = append(kvs, kv)
		}
		sortKV(kvs) // for string keys, the order of the strings
		b = AppendMapHeader(b, len(kvs))
		for _, kv := range kvs {
			b = append(append(b, kv[0]...), kv[1]...)
		}
		return b, nil
	case reflect.Struct:
		fields := structFields(rv, nil)
		b = AppendMapHeader(b, len(fields))
		for _, f := range fields {
			if b, err = appendReflect(AppendString(b, f.name), f.v, depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, errors.New("msgpack: Encode(unsupported " + rv.Type().String() + ")")
}

type fieldValue struct {
	name string
	v    reflect.Value
}

// structFields lists the fields of a struct value msgpack/v5 would write,
// in order, without the omitempty ones that are empty.
func structFields(rv reflect.Value, out []fieldValue) []fieldValue {
	t := rv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("msgpack")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (f.PkgPath != "" && !f.Anonymous) {
			continue
		}
		fv := rv.Field(i)
		if f.Anonymous && name == "" {
			inner := fv
			if inner.Kind() == reflect.Pointer {
				if inner.IsNil() {
					continue
				}
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				out = structFields(inner, out)
				continue
			}
		}
		if f.PkgPath != "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if hasOption(opts, "omitempty") && emptyReflect(fv) {
			continue
		}
		out = append(out, fieldValue{name, fv})
	}
	return out
}

func hasOption(opts, o string) bool {
	for opts != "" {
		var x string
		x, opts, _ = strings.Cut(opts, ",")
		if x == o {
			return true
		}
	}
	return false
}

func emptyOther(v any) bool { return emptyReflect(reflect.ValueOf(v)) }

type isZeroer interface{ IsZero() bool }

// emptyReflect is msgpack/v5's isEmptyValue.
func emptyReflect(rv reflect.Value) bool {
	for rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return true
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return true
	}
	if rv.CanInterface() {
		if z, ok := rv.Interface().(isZeroer); ok {
			switch rv.Kind() {
			case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
				if rv.IsNil() {
					return true
				}
			}
			return z.IsZero()
		}
	}
	switch rv.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() == 0
	case reflect.Struct:
		return len(structFields(rv, nil)) == 0
	case reflect.Bool:
		return !rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return rv.Float() == 0
	case reflect.Pointer:
		return rv.IsNil()
	}
	return false
}

var (
	timeType  = reflect.TypeFor[time.Time]()
	errorType = reflect.TypeFor[error]()
)

// typeName names v's type for the digest's placeholders.
func typeName(v any) string { return reflect.TypeOf(v).String() }

// isNilPointer reports whether v is a typed nil pointer.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
