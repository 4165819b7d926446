//go:build !wasm

package synccore

import (
	"crypto/sha256"
	"hash"
)

// newDigestHash is crypto/sha256 natively (assembly, and linked anyway).
func newDigestHash() hash.Hash { return sha256.New() }
