package store

import (
	"bytes"
	"fmt"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// partCodec encodes part bodies as msgpack. Bodies are stored as msgpack
// because decoding them is several times cheaper than JSON (FACTS.md), and
// integers are compact so the blobs stay small. One codec per connection:
// it is not safe for concurrent use.
type partCodec struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	rd  bytes.Reader
	dec *msgpack.Decoder
	key []byte // decodePart's key buffer
}

func newPartCodec() *partCodec {
	pc := &partCodec{}
	pc.enc = msgpack.NewEncoder(&pc.buf)
	pc.enc.UseCompactInts(true)
	pc.dec = msgpack.NewDecoder(&pc.rd)
	return pc
}

// encode returns the body of p; the slice is valid until the next call.
func (pc *partCodec) encode(p *synccore.Part) ([]byte, error) {
	pc.buf.Reset()
	if err := pc.enc.Encode(p); err != nil {
		return nil, synccore.Errorf(synccore.CodeInvalidPart, "part %q does not encode: %v", p.PartID, err)
	}
	return pc.buf.Bytes(), nil
}

// decode fills p from body. body may be memory owned by SQLite: the decoder
// copies every string and byte slice it keeps.
func (pc *partCodec) decode(body []byte, p *synccore.Part) error {
	pc.rd.Reset(body)
	pc.dec.Reset(&pc.rd)
	if err := decodePart(pc.dec, &pc.key, p); err != nil {
		return fmt.Errorf("store: decode part body: %w", err)
	}
	return nil
}
