package store

import (
	"fmt"

	"github.com/agentsync/agentsync/synccore"
	"github.com/vmihailenco/msgpack/v5"
)

// decodePart is a reflection-free decoder for the part bodies the store
// writes: a msgpack map keyed by the Part's msgpack names. It is about half
// the cost of msgpack's reflective struct decoding, which dominated page
// reads. Keys are read into a reused buffer (no allocation); unknown keys
// are skipped, so bodies written by a newer binary still decode.
// TestDecodePartMatchesReflection keeps it in step with synccore.Part.
func decodePart(d *msgpack.Decoder, key *[]byte, p *synccore.Part) error {
	n, err := d.DecodeMapLen()
	if err != nil {
		return err
	}
	for range n {
		kl, err := d.DecodeBytesLen()
		if err != nil {
			return err
		}
		if kl < 0 {
			return fmt.Errorf("nil map key")
		}
		if cap(*key) < kl {
			*key = make([]byte, kl)
		}
		k := (*key)[:kl]
		if err := d.ReadFull(k); err != nil {
			return err
		}
		switch string(k) { // no allocation: the compiler special-cases this
		case "part_id":
			p.PartID, err = d.DecodeString()
		case "sequence":
			p.Sequence, err = d.DecodeInt64()
		case "type":
			var s string
			s, err = d.DecodeString()
			p.Type = synccore.PartType(s)
		case "step_id":
			p.StepID, err = d.DecodeString()
		case "state":
			p.State, err = d.DecodeString()
		case "text":
			p.Text, err = d.DecodeString()
		case "tag":
			p.Tag, err = d.DecodeString()
		case "context":
			p.Context, err = d.DecodeString()
		case "url":
			p.URL, err = d.DecodeString()
		case "media_type":
			p.MediaType, err = d.DecodeString()
		case "filename":
			p.Filename, err = d.DecodeString()
		case "data_type":
			p.DataType, err = d.DecodeString()
		case "data":
			p.Data, err = d.DecodeInterface()
		case "data_id":
			p.DataID, err = d.DecodeString()
		case "tool_call_id":
			p.ToolCallID, err = d.DecodeString()
		case "tool_name":
			p.ToolName, err = d.DecodeString()
		case "input":
			p.Input, err = d.DecodeInterface()
		case "output":
			p.Output, err = d.DecodeInterface()
		case "interaction_id":
			p.InteractionID, err = d.DecodeString()
		case "status":
			p.Status, err = d.DecodeString()
		case "request":
			p.Request, err = d.DecodeInterface()
		case "response":
			p.Response, err = d.DecodeInterface()
		case "action_id":
			p.ActionID, err = d.DecodeString()
		case "action_type":
			p.ActionType, err = d.DecodeString()
		case "title":
			p.Title, err = d.DecodeString()
		case "scope":
			p.Scope, err = d.DecodeString()
		case "code":
			p.Code, err = d.DecodeString()
		case "message":
			p.Message, err = d.DecodeString()
		case "recoverable":
			p.Recoverable, err = d.DecodeBool()
		default:
			err = d.Skip()
		}
		if err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	return nil
}
