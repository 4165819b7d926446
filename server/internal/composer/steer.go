package composer

import "github.com/agentsync/agentsync/synccore"

// DataTypeRead is the data_type of the read marker: the part of a turn's
// agent message that says where a step first read a user message sent while
// the turn ran (a steer). Its data is {"user_sequence": N}. The model must
// see the steer there, before what the steps that read it wrote, not after
// the whole agent message: otherwise every later step of the turn would read
// the steer as new and answer it again (docs/protocol.md §2).
const DataTypeRead = "agentsync.read"

// readSequence is the user sequence a read marker names, 0 if p is none.
// Its data went through the store and back, so the number may be of any
// integer or float type the codecs produce.
func readSequence(p *synccore.Part) int64 {
	if p.Type != synccore.PartData || p.DataType != DataTypeRead {
		return 0
	}
	data, ok := p.Data.(map[string]any)
	if !ok {
		return 0
	}
	switch n := data["user_sequence"].(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int8:
		return int64(n)
	case int16:
		return int64(n)
	case int32:
		return int64(n)
	case uint8:
		return int64(n)
	case uint16:
		return int64(n)
	case uint32:
		return int64(n)
	case uint64:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// steersRead is the set of user messages that some agent message's read
// marker places inside it, by sequence: every user message after that agent
// message up to the marker's sequence.
func steersRead(history []synccore.Message) map[int64]bool {
	var placed map[int64]bool
	for i := range history {
		m := &history[i]
		if m.Role != synccore.RoleAgent {
			continue
		}
		for j := range m.Parts {
			n := readSequence(&m.Parts[j])
			if n == 0 {
				continue
			}
			for k := i + 1; k < len(history) && history[k].Sequence <= n; k++ {
				if history[k].Role == synccore.RoleUser && sameTurn(m, &history[k]) {
					if placed == nil {
						placed = map[int64]bool{}
					}
					placed[history[k].Sequence] = true
				}
			}
		}
	}
	return placed
}

// sameTurn reports whether a user message after agent message m belongs to
// m's turn (a steer it read), not to a later one that waited (a queued
// message, docs/protocol.md §2). Messages without turn ids count as one
// turn.
func sameTurn(m, user *synccore.Message) bool {
	return m.TurnID == "" || user.TurnID == "" || m.TurnID == user.TurnID
}
