package bindings

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// Reflection-free msgpack for the per-frame path of WasmCore.Handle: the
// frames event in, the Output out. Everything else (and any shape these
// decoders do not expect) goes through msgpack/v5.

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

// errUnexpected makes decodeOutput fall back to msgpack/v5.
var errUnexpected = errors.New("unexpected msgpack shape")

// decodeOutput decodes an Output without reflection, interning the strings
// commands repeat. Shapes it does not expect fall back to msgpack/v5, so it
// is never less correct than the reflective decoder.
func decodeOutput(b []byte, out *synccore.Output) error {
	r := reader{b: b}
	if err := r.output(out); err == nil && r.i == len(b) {
		return nil
	}
	*out = synccore.Output{}
	return msgpack.Unmarshal(b, out)
}

// reader reads msgpack from a byte slice.
type reader struct {
	b []byte
	i int
}

func (r *reader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errUnexpected
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

func (r *reader) next(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.i < n {
		return nil, errUnexpected
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s, nil
}

func (r *reader) uint(n int) (uint64, error) {
	s, err := r.next(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range s {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// mapLen reads a map header; nil reads as an empty map.
func (r *reader) mapLen() (int, error) {
	c, err := r.byte()
	switch {
	case err != nil:
		return 0, err
	case c&0xf0 == 0x80:
		return int(c & 0x0f), nil
	case c == 0xde:
		n, err := r.uint(2)
		return int(n), err
	case c == 0xdf:
		n, err := r.uint(4)
		return int(n), err
	case c == 0xc0:
		return 0, nil
	}
	return 0, errUnexpected
}

// arrayLen reads an array header; nil reads as -1.
func (r *reader) arrayLen() (int, error) {
	c, err := r.byte()
	switch {
	case err != nil:
		return 0, err
	case c&0xf0 == 0x90:
		return int(c & 0x0f), nil
	case c == 0xdc:
		n, err := r.uint(2)
		return int(n), err
	case c == 0xdd:
		n, err := r.uint(4)
		return int(n), err
	case c == 0xc0:
		return -1, nil
	}
	return 0, errUnexpected
}

// rawString reads a str (nil reads as empty); the bytes alias the input.
func (r *reader) rawString() ([]byte, error) {
	c, err := r.byte()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9:
		n, err = r.uint(1)
	case c == 0xda:
		n, err = r.uint(2)
	case c == 0xdb:
		n, err = r.uint(4)
	case c == 0xc0:
		return nil, nil
	default:
		return nil, errUnexpected
	}
	if err != nil {
		return nil, err
	}
	return r.next(int(n))
}

// known are the strings commands repeat: they decode without allocating.
var known = map[string]string{}

func init() {
	for _, s := range []string{
		synccore.CmdOpenSubscription, synccore.CmdCloseSubscription, synccore.CmdFetchPage,
		synccore.CmdSetTimer, synccore.CmdRender, synccore.CmdStatus,
		synccore.StatusIdle, synccore.StatusConnecting, synccore.StatusSyncing,
		synccore.StatusLive, synccore.StatusBackoff, synccore.StatusClosed,
	} {
		known[s] = s
	}
}

func (r *reader) string() (string, error) {
	s, err := r.rawString()
	if err != nil {
		return "", err
	}
	if k, ok := known[string(s)]; ok { // no allocation: a map lookup by []byte
		return k, nil
	}
	return string(s), nil
}

func (r *reader) int() (int64, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	}
	var v uint64
	switch c {
	case 0xcc:
		v, err = r.uint(1)
	case 0xcd:
		v, err = r.uint(2)
	case 0xce:
		v, err = r.uint(4)
	case 0xcf:
		v, err = r.uint(8)
		if v > math.MaxInt64 {
			return 0, errUnexpected
		}
	case 0xd0:
		v, err = r.uint(1)
		return int64(int8(v)), err
	case 0xd1:
		v, err = r.uint(2)
		return int64(int16(v)), err
	case 0xd2:
		v, err = r.uint(4)
		return int64(int32(v)), err
	case 0xd3:
		v, err = r.uint(8)
		return int64(v), err
	case 0xc0:
		return 0, nil
	default:
		return 0, errUnexpected
	}
	return int64(v), err
}

func (r *reader) bool() (bool, error) {
	c, err := r.byte()
	switch {
	case err != nil:
		return false, err
	case c == 0xc3:
		return true, nil
	case c == 0xc2 || c == 0xc0:
		return false, nil
	}
	return false, errUnexpected
}

func (r *reader) output(out *synccore.Output) error {
	n, err := r.mapLen()
	if err != nil {
		return err
	}
	for range n {
		key, err := r.rawString()
		if err != nil {
			return err
		}
		switch string(key) {
		case "commands":
			m, err := r.arrayLen()
			if err != nil {
				return err
			}
			if m < 0 {
				continue
			}
			out.Commands = make([]synccore.Command, m)
			for i := range out.Commands {
				if err := r.command(&out.Commands[i]); err != nil {
					return err
				}
			}
		case "error":
			if r.i < len(r.b) && r.b[r.i] == 0xc0 {
				r.i++
				continue
			}
			e := &synccore.Error{}
			if err := r.error(e); err != nil {
				return err
			}
			out.Error = e
		default:
			return errUnexpected // unknown keys: let msgpack/v5 skip them
		}
	}
	return nil
}

func (r *reader) error(e *synccore.Error) error {
	n, err := r.mapLen()
	if err != nil {
		return err
	}
	for range n {
		key, err := r.rawString()
		if err != nil {
			return err
		}
		switch string(key) {
		case "code":
			e.Code, err = r.string()
		case "message":
			e.Message, err = r.string()
		default:
			return errUnexpected
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) command(c *synccore.Command) error {
	n, err := r.mapLen()
	if err != nil {
		return err
	}
	for range n {
		key, err := r.rawString()
		if err != nil {
			return err
		}
		var v int64
		switch string(key) {
		case "type":
			c.Type, err = r.string()
		case "session_id":
			c.SessionID, err = r.string()
		case "request_id":
			v, err = r.int()
			c.RequestID = uint64(v)
		case "limit":
			v, err = r.int()
			c.Limit = int(v)
		case "before_sequence":
			c.BeforeSequence, err = r.int()
		case "include_internal":
			c.IncludeInternal, err = r.bool()
		case "timer_id":
			v, err = r.int()
			c.TimerID = uint64(v)
		case "delay_ms":
			c.DelayMs, err = r.int()
		case "message_ids":
			var m int
			if m, err = r.arrayLen(); err == nil && m >= 0 {
				c.MessageIDs = make([]string, m)
				for i := range c.MessageIDs {
					if c.MessageIDs[i], err = r.string(); err != nil {
						break
					}
				}
			}
		case "reset":
			c.Reset, err = r.bool()
		case "status":
			c.Status, err = r.string()
		case "reason":
			c.Reason, err = r.string()
		default:
			return errUnexpected
		}
		if err != nil {
			return err
		}
	}
	return nil
}
