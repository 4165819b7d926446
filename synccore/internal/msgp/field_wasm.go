//go:build wasm

package msgp

// field_wasm.go: field.go's writers as calls, to keep the module small.

// AppendKeyStr appends the key k and the string v.
//
//go:noinline
func AppendKeyStr(b []byte, k, v string) []byte { return AppendString(append(b, k...), v) }

// AppendKeyInt appends the key k and the int v.
//
//go:noinline
func AppendKeyInt(b []byte, k string, v int64) []byte { return AppendInt(append(b, k...), v) }

// AppendKeyUint appends the key k and the uint v.
//
//go:noinline
func AppendKeyUint(b []byte, k string, v uint64) []byte { return AppendUint(append(b, k...), v) }

// AppendKeyBool appends the key k and the bool v.
//
//go:noinline
func AppendKeyBool(b []byte, k string, v bool) []byte { return AppendBool(append(b, k...), v) }
