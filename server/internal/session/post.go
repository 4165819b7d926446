package session

import (
	"context"
	"regexp"

	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
)

// MaxUserParts bounds the parts of one user message.
const MaxUserParts = 64

// PostMessage validates and commits a user message, then starts a turn, or
// joins the running one (a steer: the turn's next model step sees it).
func (m *Manager) PostMessage(ctx context.Context, sessionID string, req PostMessage) (synccore.Message, error) {
	parts, err := userParts(req.Parts)
	if err != nil {
		return synccore.Message{}, err
	}
	msgID, err := userMessageID(sessionID, req.IdempotencyKey)
	if err != nil {
		return synccore.Message{}, err
	}
	vis := req.Visibility
	switch vis {
	case "":
		vis = synccore.VisibilityVisible
	case synccore.VisibilityVisible, synccore.VisibilityInternal:
	default:
		return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, "unknown visibility %q", vis)
	}
	delivery := httpwire.Delivery(req.Delivery)
	switch delivery {
	case "":
		delivery = httpwire.DeliverySteer
	case httpwire.DeliverySteer, httpwire.DeliveryQueue, httpwire.DeliveryInterrupt:
	default:
		return synccore.Message{}, synccore.Errorf(synccore.CodeBadRequest, "unknown delivery %q (steer, queue or interrupt)", req.Delivery)
	}
	return serveMessage(ctx, m, sessionID, func(s *live) (synccore.Message, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closing {
			return synccore.Message{}, errStopping
		}
		if req.IdempotencyKey != "" {
			if prev, found, err := s.posted(ctx, msgID); found || err != nil {
				return prev, err
			}
		}
		// Join the running turn unless it is already being stopped: a message
		// joining a turn that ends now would never be answered.
		t := s.turn
		running := t != nil && t.ctx.Err() == nil && t.own == s.own
		join := running && delivery == httpwire.DeliverySteer
		// A message queued or interrupting waits for the running turn (or
		// the ones queued before it) to end; so does any message while
		// others wait, so that they are answered in order.
		wait := running && !join || len(s.queued) > 0 && !join
		turnID := newID("turn_")
		if join {
			turnID = t.id
		}
		if wait && delivery != httpwire.DeliverySteer {
			parts = append(parts, deliveryPart(delivery, len(parts)+1))
		}
		msg, err := s.commitNew(ctx, synccore.Message{
			MessageID:  msgID,
			Role:       synccore.RoleUser,
			TurnID:     turnID,
			Visibility: vis,
			Parts:      parts,
		})
		if err != nil {
			return synccore.Message{}, err
		}
		switch {
		case join:
			t.lastUserSeq = msg.Sequence
		case wait && delivery == httpwire.DeliveryInterrupt:
			// First in line, then stop the running turn: its end starts it.
			s.queued = append([]queuedTurn{{id: turnID, seq: msg.Sequence}}, s.queued...)
			if running {
				t.cancel(&stopCause{action: actionPart(Action{ActionType: ActionStop}, "Interrupted by a new message")})
			}
		case wait:
			s.queued = append(s.queued, queuedTurn{id: turnID, seq: msg.Sequence})
		default:
			s.startTurn(ctx, turnID, msg.Sequence)
		}
		return *msg, nil
	})
}

// queuedTurn is a user message waiting for the running turn to end
// (delivery queue or interrupt): the turn that will answer it.
type queuedTurn struct {
	id  string
	seq int64
}

// deliveryPart is the data part that shows a message as queued or
// interrupting (httpwire.DataTypeDelivery).
func deliveryPart(d httpwire.Delivery, seq int) synccore.Part {
	p := synccore.Part{Type: synccore.PartData, Sequence: int64(seq), DataType: httpwire.DataTypeDelivery,
		Data: map[string]any{"delivery": string(d)}}
	p.PartID = partID(synccore.RoleUser, p.Type, p.Sequence)
	return p
}

// startQueued starts the turn of the first queued message once no turn
// runs. Caller holds s.mu.
func (s *live) startQueued() {
	if s.turn != nil || s.closing || len(s.queued) == 0 {
		return
	}
	q := s.queued[0]
	s.queued = s.queued[1:]
	// The request that queued it is long answered: its turn's span is a
	// root of its own.
	s.startTurn(s.m.base, q.id, q.seq)
}

var tagPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// userParts validates the parts of a user message and returns clean copies
// with server-made ids and sequences: only the fields of each type are
// kept.
func userParts(in []synccore.Part) ([]synccore.Part, error) {
	if len(in) == 0 {
		return nil, synccore.Errorf(synccore.CodeInvalidMessage, "a message needs at least one part")
	}
	if len(in) > MaxUserParts {
		return nil, synccore.Errorf(synccore.CodeInvalidMessage, "a message has at most %d parts, got %d", MaxUserParts, len(in))
	}
	out := make([]synccore.Part, len(in))
	for i, p := range in {
		bad := func(format string, args ...any) error {
			return synccore.Errorf(synccore.CodeInvalidPart, "part %d (%s): "+format, append([]any{i + 1, p.Type}, args...)...)
		}
		if p.State != "" || p.StepID != "" {
			return nil, bad("a user part has no state or step_id")
		}
		c := synccore.Part{Type: p.Type, Sequence: int64(i + 1)}
		switch p.Type {
		case synccore.PartText:
			if p.Text == "" {
				return nil, bad("text is empty")
			}
			c.Text = p.Text
		case synccore.PartContext:
			if !tagPattern.MatchString(p.Tag) {
				return nil, bad("tag %q must be a word (letters, digits, _ . -)", p.Tag)
			}
			if p.Context == "" {
				return nil, bad("context is empty")
			}
			c.Tag, c.Context = p.Tag, p.Context
		case synccore.PartFile:
			if p.URL == "" || p.MediaType == "" {
				return nil, bad("a file needs url and media_type")
			}
			c.URL, c.MediaType, c.Filename = p.URL, p.MediaType, p.Filename
		case synccore.PartData:
			if p.DataType == "" {
				return nil, bad("data needs data_type")
			}
			c.DataType, c.Data, c.DataID = p.DataType, p.Data, p.DataID
		case synccore.PartReasoning, synccore.PartTool, synccore.PartInteraction, synccore.PartAction, synccore.PartError:
			return nil, bad("only agent messages have %s parts", p.Type)
		default:
			return nil, synccore.Errorf(synccore.CodeUnknownPartType, "part %d has unknown type %q", i+1, p.Type)
		}
		c.PartID = partID(synccore.RoleUser, c.Type, c.Sequence)
		out[i] = c
	}
	return out, nil
}
