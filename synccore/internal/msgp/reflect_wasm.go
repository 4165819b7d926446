//go:build wasm

package msgp

import "errors"

// reflect_wasm.go: the WebAssembly module does not link reflect. Every
// `any` value it holds was decoded by this package (value.go), so it is
// always one of the types AppendValue and EmptyValue name; these are the
// answers for any other type, which cannot reach the module.

func encodeOther(b []byte, v any) ([]byte, error) {
	return b, errors.New("msgpack: Encode(unsupported value)")
}

func emptyOther(v any) bool { return false }

func typeName(v any) string {
	if _, ok := v.(timestamp); ok {
		return "time.Time" // as reflect names the native core's time.Time
	}
	return "value"
}

func isNilPointer(v any) bool { return false }
