package synccore

import "github.com/agentsync/agentsync/synccore/internal/msgp"

// fastframes.go reads the frames of a WebSocket message. A delta frame is
// read in place, its ids and text aliasing the input, so applying it
// allocates nothing. Every other frame, and any delta with an unexpected
// field type, goes to the full frame decoder (codec_gen.go) on the same bytes,
// so both paths accept exactly the same inputs with the same meaning.

// rawFrame is one frame read from the input: a delta read in place
// (full == nil), or a frame decoded by the full decoder.
type rawFrame struct {
	seq           uint64
	msgID, partID []byte
	text          []byte
	rev, offset   int64
	full          *Frame
}

// frame returns an owned Frame (ids and text copied out of the input), as
// the buffer of a syncing client must outlive the host's input buffer.
func (rf *rawFrame) frame() Frame {
	if rf.full != nil {
		return *rf.full
	}
	return Frame{Seq: rf.seq, Kind: FrameDelta, MessageID: string(rf.msgID), Revision: rf.rev,
		PartID: string(rf.partID), Offset: rf.offset, Text: string(rf.text)}
}

// nextFrame reads one frame at r into rf and validates it.
func nextFrame(r *msgp.Reader, rf *rawFrame) *Error {
	start := r.Pos
	if readDeltaFast(r, rf) {
		if len(rf.msgID) == 0 || rf.rev < 1 || len(rf.partID) == 0 || rf.offset < 0 {
			return Errorf(CodeMalformed, "delta frame %d needs message_id, revision, part_id and an offset", rf.seq)
		}
		return nil
	}
	r.Pos = start
	if !r.Skip() {
		return Errorf(CodeMalformed, "frames: truncated frame")
	}
	f, err := decodeFrame(r.Buf[start:r.Pos])
	if err != nil {
		return asError(err)
	}
	if err := validateFrame(&f); err != nil {
		return asError(err)
	}
	*rf = rawFrame{seq: f.Seq, full: &f}
	return nil
}

// readDeltaFast reads a delta frame in the canonical shape. It returns false
// (and the caller rewinds) for any other kind, any field it cannot read
// exactly as the full decoder would, or malformed input.
func readDeltaFast(r *msgp.Reader, rf *rawFrame) bool {
	n, ok := r.MapHeader()
	if !ok {
		return false
	}
	*rf = rawFrame{}
	isDelta := false
	for range n {
		k, ok := r.Str()
		if !ok {
			return false
		}
		switch string(k) {
		case "seq":
			v, ok := r.Int()
			if !ok || v < 0 {
				return false
			}
			rf.seq = uint64(v)
		case "kind":
			v, ok := r.Str()
			if !ok {
				return false
			}
			isDelta = string(v) == FrameDelta
		case "message_id":
			if rf.msgID, ok = r.Str(); !ok {
				return false
			}
		case "revision":
			if rf.rev, ok = r.Int(); !ok {
				return false
			}
		case "part_id":
			if rf.partID, ok = r.Str(); !ok {
				return false
			}
		case "offset":
			if rf.offset, ok = r.Int(); !ok {
				return false
			}
		case "text":
			if rf.text, ok = r.Str(); !ok {
				return false
			}
		default:
			if isKey(fieldsFrame, k) {
				return false // a field of another kind: let the full decoder judge
			}
			if !r.Skip() { // unknown keys are ignored (forward compatibility)
				return false
			}
		}
	}
	return isDelta
}

// isKey reports whether k is one of a type's field names.
func isKey(fields [][]byte, k []byte) bool {
	for _, f := range fields {
		if string(f) == string(k) {
			return true
		}
	}
	return false
}
