package bindings

import (
	"encoding/binary"
	"math"

	"github.com/agentsync/agentsync/synccore"
)

// The per-frame path of WasmCore.Handle writes a frames event as a
// hand-made header followed by the frame bytes, straight into the module's
// memory: no host-side copy of the data. Every other event is encoded with
// synccore's codec, and every answer decoded with it.

// framesHeader is the msgpack of Event{Type: "frames", Data: ...} up to the
// data's bin header, byte-identical to msgpack/v5's encoding of the struct.
var framesHeader = []byte("\x82\xa4type\xa6frames\xa4data")

// isPlainFrames reports whether ev carries nothing but frames bytes.
func isPlainFrames(ev *synccore.Event) bool {
	return ev.Type == synccore.EvFrames && ev.SessionID == "" && ev.PageLimit == 0 && !ev.IncludeInternal &&
		ev.RequestID == 0 && ev.Page == nil && ev.Error == "" && ev.Jitter == 0 && ev.TimerID == 0
}

// appendFramesEventHeader appends the event's bytes before its data.
func appendFramesEventHeader(b []byte, n int) []byte {
	if n == 0 {
		// msgpack/v5 omits an empty Data (omitempty): a one-key map.
		return append(b, "\x81\xa4type\xa6frames"...)
	}
	b = append(b, framesHeader...)
	switch {
	case n <= math.MaxUint8:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xc5, byte(n>>8), byte(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
}
