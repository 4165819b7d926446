// Package msgp is the msgpack of the kit, without reflection on its hot
// paths and without a msgpack library: the primitives (wire.go), a decoder
// that fails like msgpack/v5 (decoder.go), the `any` values of parts
// (value.go, time*.go, reflect*.go) and their canonical form for the digest
// (canon.go). Every writer produces what msgpack/v5 writes with
// UseCompactInts(true) and SetSortMapKeys(true).
//
// It knows no type of synccore: synccore's per-type codec is generated from
// its types' struct tags (tools/gencodec, synccore/codec_gen.go) and calls
// into this package, so synccore imports msgp and never the reverse.
package msgp
