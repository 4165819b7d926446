//go:build !wasm

package msgp

// field.go writes one field of a struct: its key, given with its fixstr
// header (the generated keyT* constants), and its value. Natively these
// inline into the generated encoders, the server's hot path; in the
// WebAssembly module they are calls (field_wasm.go), because inlined into
// every field of every encoder they would add ~100 KB to it.

// AppendKeyStr appends the key k and the string v.
func AppendKeyStr(b []byte, k, v string) []byte { return AppendString(append(b, k...), v) }

// AppendKeyInt appends the key k and the int v.
func AppendKeyInt(b []byte, k string, v int64) []byte { return AppendInt(append(b, k...), v) }

// AppendKeyUint appends the key k and the uint v.
func AppendKeyUint(b []byte, k string, v uint64) []byte { return AppendUint(append(b, k...), v) }

// AppendKeyBool appends the key k and the bool v.
func AppendKeyBool(b []byte, k string, v bool) []byte { return AppendBool(append(b, k...), v) }
