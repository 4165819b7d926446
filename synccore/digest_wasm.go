//go:build wasm

package synccore

import "hash"

// newDigestHash is the hand-written SHA-256 in the WebAssembly module.
func newDigestHash() hash.Hash { return sha256Hash{newSHA256()} }

// sha256Hash adapts sha256d to hash.Hash.
type sha256Hash struct{ *sha256d }

func (sha256Hash) Size() int      { return 32 }
func (sha256Hash) BlockSize() int { return 64 }
func (h sha256Hash) Reset()       { *h.sha256d = *newSHA256() }
