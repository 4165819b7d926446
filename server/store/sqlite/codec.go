package sqlite

import (
	"fmt"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// partCodec encodes part bodies as msgpack with synccore's reflection-free
// codec. Bodies are stored as msgpack because decoding them is several
// times cheaper than JSON (measured: ~50 µs for a 150-part page passed
// through as msgpack, ~400 µs to decode it from JSON), and integers are compact so the blobs
// stay small; the bytes are what msgpack/v5 writes for a Part with compact
// ints, so blobs written by earlier binaries read the same. One codec per
// connection: it is not safe for concurrent use.
type partCodec struct {
	buf []byte
}

func newPartCodec() *partCodec { return &partCodec{} }

// encode returns the body of p; the slice is valid until the next call.
func (pc *partCodec) encode(p *synccore.Part) ([]byte, error) {
	b, err := wire.AppendPart(pc.buf[:0], p)
	if err != nil {
		return nil, synccore.Errorf(synccore.CodeInvalidPart, "part %q does not encode: %v", p.PartID, err)
	}
	pc.buf = b
	return b, nil
}

// decode fills p from body. body may be memory owned by SQLite:
// wire.DecodePart copies every string and byte slice it keeps.
func (pc *partCodec) decode(body []byte, p *synccore.Part) error {
	var err error
	if *p, err = wire.DecodePart(body); err != nil {
		return fmt.Errorf("store: decode part body: %w", err)
	}
	return nil
}
