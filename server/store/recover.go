package store

import (
	"context"
	"fmt"

	"github.com/agentsync/agentsync/synccore"
)

// interruptedToolOutput is the output given to a tool that never finished
// and had no output of its own: output-error needs one to explain itself.
var interruptedToolOutput = map[string]any{"error": "the server stopped before the tool finished"}

// RecoverStreaming closes every agent message left streaming by a crash,
// one transaction per message: open parts are closed (text and reasoning →
// done, an unfinished tool → output-error, a pending interaction →
// cancelled, a pending action → failed), the error part built by mkErr is
// appended (its sequence set to last part + 1; an empty part_id becomes
// "recovery-error:<sequence>", an empty type "error") and the message
// becomes done at revision + 1. mkErr sees the message already closed,
// without the error part. Returns the recovered messages, in session and
// sequence order.
func (s *Store) RecoverStreaming(ctx context.Context, mkErr func(m synccore.Message) synccore.Part) ([]synccore.Message, error) {
	type ref struct{ sessionID, messageID string }
	var refs []ref
	err := s.read(ctx, func(c *conn) error {
		st, err := c.query(`SELECT s.session_id, m.message_id FROM messages AS m JOIN sessions AS s USING (sid)
			WHERE m.state = 'streaming' ORDER BY m.sid, m.sequence`)
		if err != nil {
			return err
		}
		for st.Step() {
			refs = append(refs, ref{st.ColumnText(0), st.ColumnText(1)})
		}
		return done(st)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list streaming messages: %w", err)
	}

	out := []synccore.Message{}
	for _, r := range refs {
		var rec synccore.Message
		recovered := false
		err := s.write(ctx, func(c *conn) error {
			sess, err := lookupSession(c, r.sessionID)
			if err != nil {
				return err
			}
			m, found, err := loadMessage(c, sess.sid, r.sessionID, r.messageID)
			if err != nil || !found || m.State != synccore.MessageStreaming {
				return err // closed meanwhile: nothing to do
			}
			changed := closeOpenParts(&m)
			m.State = synccore.MessageDone
			m.Revision++
			ep := mkErr(m)
			ep.Sequence = lastPartSequence(m.Parts) + 1
			if ep.Type == "" {
				ep.Type = synccore.PartError
			}
			if ep.PartID == "" {
				ep.PartID = fmt.Sprintf("recovery-error:%d", ep.Sequence)
			}
			m.Parts = append(m.Parts, ep)
			changed = append(changed, ep)

			// Commit only the changed parts: the others are kept.
			delta := m
			delta.Parts = changed
			if err := commitMessage(c, &sess, r.sessionID, &delta, m.CreatedAt); err != nil {
				return err
			}
			if err := c.exec(`UPDATE sessions SET updated_at = ? WHERE sid = ?`, nowMillis(), sess.sid); err != nil {
				return err
			}
			rec, recovered = m, true
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("store: recover message %q of session %q: %w", r.messageID, r.sessionID, err)
		}
		if recovered {
			s.log.Info("recovered streaming message", "session_id", r.sessionID, "message_id", r.messageID,
				"revision", rec.Revision)
			out = append(out, rec)
		}
	}
	return out, nil
}

// closeOpenParts closes, in place, every part of m that could still change
// and returns copies of the parts it changed.
func closeOpenParts(m *synccore.Message) []synccore.Part {
	var changed []synccore.Part
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case synccore.PartText, synccore.PartReasoning:
			if p.State != synccore.StateStreaming {
				continue
			}
			p.State = synccore.StateDone
		case synccore.PartTool:
			switch p.State {
			case synccore.ToolOutputAvailable, synccore.ToolOutputError, synccore.ToolOutputDenied:
				continue
			}
			p.State = synccore.ToolOutputError
			if p.Output == nil {
				p.Output = interruptedToolOutput
			}
		case synccore.PartInteraction:
			if p.Status != synccore.InteractionPending {
				continue
			}
			p.Status = synccore.InteractionCancelled
		case synccore.PartAction:
			if p.State != synccore.ActionPending {
				continue
			}
			p.State = synccore.ActionFailed
		default:
			continue
		}
		changed = append(changed, *p)
	}
	return changed
}

func lastPartSequence(parts []synccore.Part) int64 {
	var last int64
	for _, p := range parts {
		last = max(last, p.Sequence)
	}
	return last
}
