package core

import (
	"github.com/agentsync/agentsync/internal/wire"
	"github.com/agentsync/agentsync/synccore"
)

// The per-frame path of WasmCore.Handle writes a frames event as its
// header (wire.AppendFramesEventHeader) followed by the frame bytes,
// straight into the module's memory: no host-side copy of the data. Every
// other event is encoded with synccore's codec, and every answer decoded
// with it.

// isPlainFrames reports whether ev carries nothing but frames bytes.
func isPlainFrames(ev *synccore.Event) bool {
	return ev.Type == synccore.EvFrames && ev.SessionID == "" && ev.PageLimit == 0 && !ev.IncludeInternal &&
		ev.RequestID == 0 && ev.Page == nil && ev.Error == "" && ev.Jitter == 0 && ev.TimerID == 0
}

// appendFramesEventHeader appends the event's bytes before its data.
func appendFramesEventHeader(b []byte, n int) []byte { return wire.AppendFramesEventHeader(b, n) }
