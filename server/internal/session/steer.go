package session

import (
	"strconv"

	"github.com/agentsync/agentsync/server/internal/composer"
	"github.com/agentsync/agentsync/synccore"
)

// DataTypeRead is the data_type of the part that marks where, in a turn's
// agent message, a step first read a user message sent while the turn ran
// (a steer). Its data is {"user_sequence": N}: every part after it was
// written by steps that had read user message N (and those before it). A
// client places what follows the marker after message N, so a reply never
// shows above the message it answers (docs/protocol.md §2).
// The composer places the steer there for the model too.
const DataTypeRead = composer.DataTypeRead

// markRead appends the read marker to the turn's agent message at the start
// of step st when the step reads a user message no earlier step of the turn
// read. The turn's first step reads the message that started the turn: no
// marker. Caller holds s.mu; the marker is committed with the step.
func (s *live) markRead(t *turn, st *step, seen int64) {
	first := t.readSeq == 0
	if seen <= t.readSeq {
		return
	}
	t.readSeq = seen
	if first || t.agent == nil {
		return
	}
	w := t.agent.add(synccore.Part{
		Type:     synccore.PartData,
		StepID:   st.id,
		DataType: DataTypeRead,
		DataID:   "read-" + strconv.FormatInt(seen, 10),
		Data:     map[string]any{"user_sequence": seen},
	})
	s.publish(t.agent.partFrame(w))
}
