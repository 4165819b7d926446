package session

import (
	"github.com/agentsync/agentsync/server/internal/cluster"
	"strings"

	"github.com/agentsync/agentsync/synccore"
)

// agentMsg is a turn's agent message in memory: the last committed
// snapshot, and the working copy (committed parts plus the streaming
// projection) that the next commit snapshots.
type agentMsg struct {
	committed *synccore.Message // immutable: shared with subscribers
	parts     []*workPart       // working copy, in part sequence order
	// own is the lease its turn began under (nil on one node): every
	// commit of the message goes under it, never a later one (epoch.go).
	own *cluster.Ownership
}

// workPart is one part of the working copy. Streaming text lives in a
// builder so a long answer costs O(length), not O(length²); dirty says the
// part differs from the committed snapshot.
type workPart struct {
	p     synccore.Part
	text  *strings.Builder // text and reasoning while streaming
	dirty bool
}

// part materialises the current value. The text is shared with the
// builder, which only ever appends, so the string stays valid.
func (w *workPart) part() synccore.Part {
	p := w.p
	if w.text != nil {
		p.Text = w.text.String()
	}
	return p
}

func newAgentMsg(committed *synccore.Message, own *cluster.Ownership) *agentMsg {
	return &agentMsg{committed: committed, own: own}
}

func (a *agentMsg) closed() bool { return a.committed.State == synccore.MessageDone }

// add appends a new part at the next sequence with a fresh id.
func (a *agentMsg) add(p synccore.Part) *workPart {
	p.Sequence = int64(len(a.parts)) + 1
	if p.PartID == "" {
		p.PartID = partID(synccore.RoleAgent, p.Type, p.Sequence)
	}
	w := &workPart{p: p, dirty: true}
	a.parts = append(a.parts, w)
	return w
}

// find returns the part matching pred, last first (recent parts are the
// ones that change).
func (a *agentMsg) find(pred func(p *synccore.Part) bool) *workPart {
	for i := len(a.parts) - 1; i >= 0; i-- {
		if pred(&a.parts[i].p) {
			return a.parts[i]
		}
	}
	return nil
}

func (a *agentMsg) tool(callID string) *workPart {
	return a.find(func(p *synccore.Part) bool { return p.Type == synccore.PartTool && p.ToolCallID == callID })
}

func (a *agentMsg) interaction(id string) *workPart {
	return a.find(func(p *synccore.Part) bool { return p.Type == synccore.PartInteraction && p.InteractionID == id })
}

// snapshot builds the next revision from the working copy: the full
// message, and the parts that changed (what the store must write).
func (a *agentMsg) snapshot(state synccore.MessageState) (full *synccore.Message, changed []synccore.Part) {
	m := *a.committed
	m.Revision++
	m.State = state
	m.Parts = make([]synccore.Part, len(a.parts))
	for i, w := range a.parts {
		if w.dirty || i >= len(a.committed.Parts) {
			m.Parts[i] = w.part()
			changed = append(changed, m.Parts[i])
		} else {
			m.Parts[i] = a.committed.Parts[i]
		}
	}
	return &m, changed
}

// committedAs records a successful commit of full.
func (a *agentMsg) committedAs(full *synccore.Message) {
	a.committed = full
	for _, w := range a.parts {
		w.dirty = false
	}
}

// projectionFrames appends one part frame per part that differs from the
// committed revision: what a subscriber joining mid-stream needs.
func (a *agentMsg) projectionFrames(frames []synccore.Frame) []synccore.Frame {
	for _, w := range a.parts {
		if w.dirty {
			frames = append(frames, a.partFrame(w))
		}
	}
	return frames
}

func (a *agentMsg) partFrame(w *workPart) synccore.Frame {
	p := w.part()
	return synccore.Frame{
		Kind:      synccore.FramePart,
		MessageID: a.committed.MessageID,
		Revision:  a.committed.Revision,
		Part:      &p,
	}
}

// closeOpen ends every part that could still change, for a message closing
// before its turn finished: streamed text is kept as it is, an unfinished
// tool fails with reason, a pending interaction is cancelled.
func (a *agentMsg) closeOpen(reason string) {
	for _, w := range a.parts {
		p := &w.p
		switch p.Type {
		case synccore.PartText, synccore.PartReasoning:
			if p.State == synccore.StateStreaming {
				w.finishText()
			}
		case synccore.PartTool:
			switch p.State {
			case synccore.ToolOutputAvailable, synccore.ToolOutputError, synccore.ToolOutputDenied:
				continue
			}
			p.State = synccore.ToolOutputError
			p.Output = map[string]any{"error": reason}
			w.dirty = true
		case synccore.PartInteraction:
			if p.Status == synccore.InteractionPending {
				p.Status = synccore.InteractionCancelled
				w.dirty = true
			}
		case synccore.PartAction:
			if p.State == synccore.ActionPending {
				// A setting is stored already (the next turn has it); a
				// retry whose run never started failed.
				p.State = synccore.ActionFailed
				if p.ActionType == ActionSetModel || p.ActionType == ActionSetApprovalMode {
					p.State = synccore.ActionCompleted
				}
				w.dirty = true
			}
		}
	}
}

// finishText marks a streamed text or reasoning part done and freezes its
// text.
func (w *workPart) finishText() {
	if w.text != nil {
		w.p.Text = w.text.String()
		w.text = nil
	}
	w.p.State = synccore.StateDone
	w.dirty = true
}
