package natsfan

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// Subjects of one session. A session id is made by the server (ses_ and
// letters or digits); ids that cannot be one NATS token are refused.
const (
	framesPrefix   = "agentsync.frames."
	snapshotPrefix = "agentsync.snapshot."
)

func checkID(sessionID string) error {
	if sessionID == "" || strings.ContainsAny(sessionID, ".*> \t\r\n") {
		return fmt.Errorf("natsfan: session id %q cannot be a NATS subject token", sessionID)
	}
	return nil
}

// headerLen is the envelope of every message: the owner's lease epoch and
// its counter (of the batch, or, in a snapshot, of the last batch the
// snapshot holds), big-endian.
const headerLen = 16

// appendBatch encodes a batch: the envelope, then the frames as one
// WebSocket message carries them (wire.AppendFrames).
func appendBatch(dst []byte, epoch int64, counter uint64, frames []synccore.Frame) ([]byte, error) {
	dst = binary.BigEndian.AppendUint64(dst, uint64(epoch))
	dst = binary.BigEndian.AppendUint64(dst, counter)
	return wire.AppendFrames(dst, frames)
}

// appendMarker encodes an envelope without frames. As a batch it says the
// owner could not publish some frames (followers resync); as a snapshot
// answer, that it cannot send its snapshot (too large for NATS).
func appendMarker(dst []byte, epoch int64) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(epoch))
	return binary.BigEndian.AppendUint64(dst, 0)
}

// batch is one decoded envelope; its frames are decoded on demand.
type batch struct {
	epoch   int64
	counter uint64
	body    []byte
}

func readBatch(data []byte) (batch, error) {
	if len(data) < headerLen {
		return batch{}, fmt.Errorf("natsfan: a message of %d bytes is shorter than its envelope", len(data))
	}
	return batch{
		epoch:   int64(binary.BigEndian.Uint64(data[:8])),
		counter: binary.BigEndian.Uint64(data[8:16]),
		body:    data[headerLen:],
	}, nil
}

// marker reports an envelope without frames (appendMarker).
func (b batch) marker() bool { return len(b.body) == 0 }

func (b batch) frames() ([]synccore.Frame, error) {
	frames, err := wire.DecodeFrames(b.body)
	if err != nil {
		return nil, fmt.Errorf("natsfan: frames of counter %d: %w", b.counter, err)
	}
	return frames, nil
}
