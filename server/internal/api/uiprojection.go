package api

import (
	"slices"

	"github.com/agentsync/agentsync/synccore"
)

// uiProjection is one agent message as a subscriber sees it: the last
// committed snapshot with the streaming projection (part and delta frames)
// merged in, by the same revision rules as synccore's client. Frames share
// their pointers with every subscriber, so nothing of theirs is mutated.
type uiProjection struct {
	msg synccore.Message
}

// setMessage takes a committed snapshot unless an equal or newer revision
// is already held (a page read and a message frame may race).
func (p *uiProjection) setMessage(m *synccore.Message) {
	if p.msg.MessageID != "" && m.Revision <= p.msg.Revision {
		return
	}
	p.msg = *m
	p.msg.Parts = slices.Clone(m.Parts)
}

// setPart upserts one part of the projection built on revision rev; parts
// of an older revision are stale (a newer snapshot holds them).
func (p *uiProjection) setPart(rev int64, part *synccore.Part) {
	if rev < p.msg.Revision {
		return
	}
	for i := range p.msg.Parts {
		if p.msg.Parts[i].PartID == part.PartID {
			p.msg.Parts[i] = *part
			return
		}
	}
	p.msg.Parts = append(p.msg.Parts, *part)
}

// appendText applies a delta frame. It reports false for a gap (text
// beyond what the projection holds, or an unknown part): the caller
// re-reads the message.
func (p *uiProjection) appendText(rev int64, partID string, offset int64, text string) bool {
	if rev < p.msg.Revision {
		return true
	}
	for i := range p.msg.Parts {
		part := &p.msg.Parts[i]
		if part.PartID != partID {
			continue
		}
		have := int64(len(part.Text))
		switch {
		case offset > have:
			return false
		case offset+int64(len(text)) > have:
			part.Text += text[have-offset:]
		}
		return true
	}
	return false
}
