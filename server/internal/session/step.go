package session

import (
	"context"
	"strings"
	"time"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// step is the in-memory state of one model step while it streams.
type step struct {
	id     string
	blocks map[string]*workPart        // text/reasoning block id -> part
	calls  []string                    // tool call ids completed in this step, in order
	open   []string                    // tool calls started but not complete
	args   map[string]*strings.Builder // input JSON streamed so far, by tool call id
	finish string
	// due is when the step's next delta is due under Speed.Delta
	// (paceDelta); zero before the first.
	due time.Time
}

// maxCatchUp bounds the deltas a late step sends at once to catch up.
const maxCatchUp = 50

// paceDelta waits until the step's next delta is due: d after the last
// one was due, not after it was applied, as a provider's tokens arrive at
// the network's pace whatever the reader's. A busy node that applies a
// delta late catches up instead of slowing the stream down (thousands of
// viewers: BenchmarkManyViewers), by maxCatchUp deltas at most: a step
// further behind starts its pace over rather than bursting (a burst of a
// fast pace on a loaded machine would overrun its subscribers' queues).
func (t *turn) paceDelta(st *step, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	now := time.Now()
	if st.due.IsZero() || now.Sub(st.due) > min(time.Second, maxCatchUp*d) {
		st.due = now
	}
	st.due = st.due.Add(d)
	return t.pause(st.due.Sub(now))
}

// validate checks the part identities of a finished step.
func (st *step) validate() error {
	if len(st.open) > 0 {
		return synccore.Errorf(synccore.CodeInvalidPart, "step %s: tool call %q never completed", st.id, st.open[0])
	}
	return nil
}

// apply runs one model event against the working copy and publishes the
// frames that describe it. It is the only place a stream touches the
// session, and it never writes to the store.
func (s *live) apply(t *turn, st *step, ev model.Event) error {
	if ev.Type == model.EvTextDelta || ev.Type == model.EvReasoningDelta {
		if err := t.paceDelta(st, s.m.speed.Delta); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := t.ctx.Err(); err != nil {
		return context.Cause(t.ctx)
	}
	if t.step != st {
		return synccore.Errorf(synccore.CodeConflict, "step %s is over", st.id)
	}
	a := t.agent
	bad := func(format string, args ...any) error {
		return synccore.Errorf(synccore.CodeInvalidPart, "step %s: "+format, append([]any{st.id}, args...)...)
	}
	switch ev.Type {
	case model.EvTextStart, model.EvReasoningStart:
		if _, dup := st.blocks[ev.BlockID]; dup {
			return bad("block %q started twice", ev.BlockID)
		}
		typ := synccore.PartText
		if ev.Type == model.EvReasoningStart {
			typ = synccore.PartReasoning
		}
		w := a.add(synccore.Part{Type: typ, StepID: st.id, State: synccore.StateStreaming})
		w.text = &strings.Builder{}
		st.blocks[ev.BlockID] = w
		s.publish(a.partFrame(w))

	case model.EvTextDelta, model.EvReasoningDelta:
		w := st.blocks[ev.BlockID]
		if w == nil || w.text == nil {
			return bad("delta for a block %q that is not streaming", ev.BlockID)
		}
		if ev.Delta == "" {
			return nil
		}
		offset := int64(w.text.Len())
		w.text.WriteString(ev.Delta)
		w.dirty = true
		s.publish(synccore.Frame{
			Kind:      synccore.FrameDelta,
			MessageID: a.committed.MessageID,
			Revision:  a.committed.Revision,
			PartID:    w.p.PartID,
			Offset:    offset,
			Text:      ev.Delta,
		})

	case model.EvTextEnd, model.EvReasoningEnd:
		w := st.blocks[ev.BlockID]
		if w == nil || w.text == nil {
			return bad("end of a block %q that is not streaming", ev.BlockID)
		}
		w.finishText()
		s.publish(a.partFrame(w))

	case model.EvToolInputStart:
		if ev.ToolCallID == "" || ev.ToolName == "" {
			return bad("tool call without id or name")
		}
		if a.tool(ev.ToolCallID) != nil {
			return bad("tool call id %q used twice", ev.ToolCallID)
		}
		w := a.add(synccore.Part{Type: synccore.PartTool, StepID: st.id, State: synccore.ToolInputStreaming,
			ToolCallID: ev.ToolCallID, ToolName: ev.ToolName})
		st.open = append(st.open, ev.ToolCallID)
		s.publish(a.partFrame(w))

	case model.EvToolInputDelta:
		w := a.tool(ev.ToolCallID)
		if w == nil || w.p.State != synccore.ToolInputStreaming || w.p.StepID != st.id {
			return bad("input for a tool call %q that is not streaming its input", ev.ToolCallID)
		}
		if st.args == nil {
			st.args = map[string]*strings.Builder{}
		}
		b := st.args[ev.ToolCallID]
		if b == nil {
			b = &strings.Builder{}
			st.args[ev.ToolCallID] = b
		}
		b.WriteString(ev.Delta)
		// Clients see the partial JSON as the input, a string, until
		// the call is complete and its input becomes the parsed value.
		w.p.Input = b.String()
		w.dirty = true
		s.publish(a.partFrame(w))

	case model.EvToolCall:
		if ev.ToolCallID == "" || ev.ToolName == "" {
			return bad("tool call without id or name")
		}
		w := a.tool(ev.ToolCallID)
		switch {
		case w == nil:
			w = a.add(synccore.Part{Type: synccore.PartTool, StepID: st.id, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName})
		case w.p.State != synccore.ToolInputStreaming || w.p.StepID != st.id:
			return bad("tool call id %q used twice", ev.ToolCallID)
		case w.p.ToolName != ev.ToolName:
			return bad("tool call %q changed its tool from %q to %q", ev.ToolCallID, w.p.ToolName, ev.ToolName)
		}
		w.p.State = synccore.ToolInputAvailable
		w.p.Input = ev.Input
		w.dirty = true
		st.open = remove(st.open, ev.ToolCallID)
		st.calls = append(st.calls, ev.ToolCallID)
		s.publish(a.partFrame(w))

	case model.EvData:
		if ev.DataType == "" {
			return bad("data part without data_type")
		}
		w := a.add(synccore.Part{Type: synccore.PartData, StepID: st.id, DataType: ev.DataType, Data: ev.Data, DataID: ev.DataID})
		s.publish(a.partFrame(w))

	case model.EvFile:
		if ev.URL == "" || ev.MediaType == "" {
			return bad("file part without url or media_type")
		}
		w := a.add(synccore.Part{Type: synccore.PartFile, StepID: st.id, URL: ev.URL, MediaType: ev.MediaType, Filename: ev.Filename})
		s.publish(a.partFrame(w))

	case model.EvFinish:
		st.finish = ev.FinishReason

	default:
		return bad("unknown model event %q", ev.Type)
	}
	return nil
}

func remove(ids []string, id string) []string {
	for i, x := range ids {
		if x == id {
			return append(ids[:i], ids[i+1:]...)
		}
	}
	return ids
}
