package synccore

// validate.go holds the model's rules. The server calls them before it
// commits anything; the client calls them on every message and part it
// receives, so a server bug shows up as a typed error, never as a torn view.

// knownPartType reports whether t is a part type of the model.
func knownPartType(t PartType) bool {
	switch t {
	case PartText, PartReasoning, PartContext, PartFile, PartData, PartTool,
		PartInteraction, PartAction, PartError:
		return true
	}
	return false
}

// partAllowed reports whether role may hold a part of type t.
func partAllowed(role Role, t PartType) bool {
	switch role {
	case RoleUser:
		return t == PartText || t == PartContext || t == PartFile || t == PartData
	case RoleAgent:
		return t != PartContext
	}
	return false
}

// validatePartValue checks one part of a message of the given role: its type,
// ids and the state or status values its type allows.
func validatePartValue(role Role, p Part) error { return validatePart(role, &p) }

// validatePart is validatePartValue without copying the part (448 bytes; a page
// of 200 messages validates 800 of them).
func validatePart(role Role, p *Part) error {
	if !knownPartType(p.Type) {
		return Errorf(CodeUnknownPartType, "part %q: unknown type %q", p.PartID, p.Type)
	}
	if p.PartID == "" {
		return Errorf(CodeInvalidPart, "%s part without part_id", p.Type)
	}
	if p.Sequence < 1 {
		return Errorf(CodeInvalidPart, "part %q: sequence %d is not positive", p.PartID, p.Sequence)
	}
	if role != RoleUser && role != RoleAgent {
		return Errorf(CodeInvalidMessage, "part %q: unknown role %q", p.PartID, role)
	}
	if !partAllowed(role, p.Type) {
		return Errorf(CodeInvalidPart, "part %q: a %s message cannot hold a %s part", p.PartID, role, p.Type)
	}
	if role == RoleUser {
		if p.State != "" || p.Status != "" {
			return Errorf(CodeInvalidPart, "part %q: a user part has no state", p.PartID)
		}
	} else if p.Status != "" && p.Type != PartInteraction {
		return Errorf(CodeInvalidPart, "part %q: only interactions have a status", p.PartID)
	}
	switch p.Type {
	case PartText, PartReasoning:
		if role == RoleAgent && p.State != StateStreaming && p.State != StateDone {
			return Errorf(CodeInvalidPart, "part %q: %s state %q is not streaming or done", p.PartID, p.Type, p.State)
		}
	case PartTool:
		switch p.State {
		case ToolInputStreaming, ToolInputAvailable, ToolAwaitingApproval, ToolRunning,
			ToolOutputAvailable, ToolOutputError, ToolOutputDenied:
		default:
			return Errorf(CodeInvalidPart, "part %q: tool state %q is not a tool state", p.PartID, p.State)
		}
		if p.ToolCallID == "" || p.ToolName == "" {
			return Errorf(CodeInvalidPart, "part %q: a tool part needs tool_call_id and tool_name", p.PartID)
		}
	case PartInteraction:
		switch p.Status {
		case InteractionPending, InteractionResolved, InteractionCancelled:
		default:
			return Errorf(CodeInvalidPart, "part %q: interaction status %q is not pending, resolved or cancelled", p.PartID, p.Status)
		}
		if p.InteractionID == "" {
			return Errorf(CodeInvalidPart, "part %q: an interaction part needs interaction_id", p.PartID)
		}
		if err := validateRequest(p); err != nil {
			return err
		}
	case PartAction:
		switch p.State {
		case ActionPending, ActionCompleted, ActionFailed:
		default:
			return Errorf(CodeInvalidPart, "part %q: action state %q is not pending, completed or failed", p.PartID, p.State)
		}
		if p.ActionID == "" || p.ActionType == "" {
			return Errorf(CodeInvalidPart, "part %q: an action part needs action_id and action_type", p.PartID)
		}
	case PartError:
		switch p.Scope {
		case ErrorScopeStep, ErrorScopeTurn, ErrorScopeSession:
		default:
			return Errorf(CodeInvalidPart, "part %q: error scope %q is not step, turn or session", p.PartID, p.Scope)
		}
		if p.Code == "" {
			return Errorf(CodeInvalidPart, "part %q: an error part needs a code", p.PartID)
		}
	case PartFile:
		if p.URL == "" {
			return Errorf(CodeInvalidPart, "part %q: a file part needs a url", p.PartID)
		}
	case PartData:
		if p.DataType == "" {
			return Errorf(CodeInvalidPart, "part %q: a data part needs a data_type", p.PartID)
		}
	}
	if p.State != "" && p.Type != PartText && p.Type != PartReasoning && p.Type != PartTool && p.Type != PartAction {
		return Errorf(CodeInvalidPart, "part %q: a %s part has no state", p.PartID, p.Type)
	}
	return nil
}

// validateRequest checks an interaction's request: a map whose kind is
// approval or question (msgpack decodes maps as map[string]any).
func validateRequest(p *Part) error {
	if p.Request == nil {
		return Errorf(CodeInvalidPart, "part %q: an interaction part needs a request", p.PartID)
	}
	var kind any
	switch m := p.Request.(type) {
	case map[string]any:
		kind = m["kind"]
	case map[any]any:
		kind = m["kind"]
	default:
		return nil // a typed Go value of the server: its own types vouch for it
	}
	if kind != "approval" && kind != "question" {
		return Errorf(CodeInvalidPart, "part %q: interaction request kind %v is not approval or question", p.PartID, kind)
	}
	return nil
}

// validateMessage checks a whole message: ids, role, state, visibility and
// every part, whose sequences must be 1..n in order with distinct ids.
func validateMessage(m Message) error {
	if m.MessageID == "" {
		return Errorf(CodeInvalidMessage, "message without message_id")
	}
	if m.SessionID == "" {
		return Errorf(CodeInvalidMessage, "message %q: no session_id", m.MessageID)
	}
	if m.Sequence < 1 {
		return Errorf(CodeInvalidMessage, "message %q: sequence %d is not positive", m.MessageID, m.Sequence)
	}
	if m.Revision < 1 {
		return Errorf(CodeInvalidMessage, "message %q: revision %d is not positive", m.MessageID, m.Revision)
	}
	switch m.Role {
	case RoleUser:
		if m.State != "" {
			return Errorf(CodeInvalidMessage, "message %q: a user message has no state", m.MessageID)
		}
		if len(m.Parts) == 0 {
			return Errorf(CodeInvalidMessage, "message %q: a user message needs a part", m.MessageID)
		}
	case RoleAgent:
		if m.State != MessageStreaming && m.State != MessageDone {
			return Errorf(CodeInvalidMessage, "message %q: agent state %q is not streaming or done", m.MessageID, m.State)
		}
	default:
		return Errorf(CodeInvalidMessage, "message %q: unknown role %q", m.MessageID, m.Role)
	}
	if m.Visibility != VisibilityVisible && m.Visibility != VisibilityInternal {
		return Errorf(CodeInvalidMessage, "message %q: visibility %q is not visible or internal", m.MessageID, m.Visibility)
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		if err := validatePart(m.Role, p); err != nil {
			return errf(err, "message %q", m.MessageID)
		}
		if p.Sequence != int64(i+1) {
			return Errorf(CodeInvalidMessage, "message %q: part %q has sequence %d at position %d", m.MessageID, p.PartID, p.Sequence, i+1)
		}
		for j := range i {
			if m.Parts[j].PartID == p.PartID {
				return Errorf(CodeInvalidMessage, "message %q: part id %q appears twice", m.MessageID, p.PartID)
			}
		}
	}
	return nil
}

// validateTransition checks that next may follow old as a later committed
// revision of the same message: same identity and sequence, a higher
// revision, old not done, and every part of old still present at its
// sequence with its type.
func validateTransition(old, next Message) error {
	if err := validateMessage(next); err != nil {
		return err
	}
	if old.MessageID != next.MessageID || old.SessionID != next.SessionID || old.Role != next.Role {
		return Errorf(CodeInvalidMessage, "message %q: identity changed (id, session or role)", old.MessageID)
	}
	if old.Done() {
		return Errorf(CodeDoneIsFinal, "message %q: revision %d is done and cannot change", old.MessageID, old.Revision)
	}
	if next.Revision <= old.Revision {
		return Errorf(CodeRevisionBackward, "message %q: revision %d does not follow %d", old.MessageID, next.Revision, old.Revision)
	}
	if next.Sequence != old.Sequence {
		return Errorf(CodeSequenceChanged, "message %q: sequence changed from %d to %d", old.MessageID, old.Sequence, next.Sequence)
	}
	if next.TurnID != old.TurnID || next.Visibility != old.Visibility || next.CreatedAt != old.CreatedAt {
		return Errorf(CodeInvalidMessage, "message %q: turn_id, visibility and created_at are immutable", old.MessageID)
	}
	for i := range old.Parts {
		op := &old.Parts[i]
		if i >= len(next.Parts) || next.Parts[i].PartID != op.PartID {
			return Errorf(CodeSequenceChanged, "message %q: part %q (sequence %d) was removed or moved", old.MessageID, op.PartID, op.Sequence)
		}
		if next.Parts[i].Type != op.Type {
			return Errorf(CodeInvalidPart, "message %q: part %q changed type from %s to %s", old.MessageID, op.PartID, op.Type, next.Parts[i].Type)
		}
	}
	return nil
}

// validatePage checks every message of a page and that items are in
// increasing sequence order.
func validatePage(p MessagePage) error {
	for i := range p.Items {
		if err := validateMessage(p.Items[i]); err != nil {
			return errf(err, "page item %d", i)
		}
		if i > 0 && p.Items[i].Sequence <= p.Items[i-1].Sequence {
			return Errorf(CodeInvalidMessage, "page: item %d (sequence %d) is not after sequence %d", i, p.Items[i].Sequence, p.Items[i-1].Sequence)
		}
	}
	if p.Total < 0 || p.NextBeforeSequence < 0 {
		return Errorf(CodeInvalidMessage, "page: negative total or next_before_sequence")
	}
	return nil
}

// validateFrame checks the meaning of one decoded frame: a known kind and
// the fields that kind needs.
func validateFrame(f *Frame) error {
	switch f.Kind {
	case FrameHello:
		if f.Protocol != ProtocolVersion {
			return Errorf(CodeMalformed, "hello: protocol %d, this client speaks %d", f.Protocol, ProtocolVersion)
		}
	case FrameMessage:
		if f.Message == nil {
			return Errorf(CodeMalformed, "message frame %d without message", f.Seq)
		}
		if err := validateMessage(*f.Message); err != nil {
			return errf(err, "message frame %d", f.Seq)
		}
	case FramePart:
		if f.MessageID == "" || f.Revision < 1 || f.Part == nil {
			return Errorf(CodeMalformed, "part frame %d needs message_id, revision and part", f.Seq)
		}
		if err := validatePart(RoleAgent, f.Part); err != nil {
			return errf(err, "part frame %d", f.Seq)
		}
	case FrameDelta:
		if f.MessageID == "" || f.Revision < 1 || f.PartID == "" || f.Offset < 0 {
			return Errorf(CodeMalformed, "delta frame %d needs message_id, revision, part_id and an offset", f.Seq)
		}
	case FrameResync, FrameError:
	default:
		return Errorf(CodeUnknownFrame, "frame %d: unknown kind %q", f.Seq, f.Kind)
	}
	return validateKept(f)
}

// validateKept checks Frame.Kept: only on part and message frames, each
// naming a text or reasoning part of the frame once, with a length.
func validateKept(f *Frame) error {
	for i, k := range f.Kept {
		var p *Part
		switch {
		case f.Kind == FramePart && f.Part.PartID == k.PartID:
			p = f.Part
		case f.Kind == FrameMessage:
			if j := f.Message.findPart(k.PartID); j >= 0 {
				p = &f.Message.Parts[j]
			}
		}
		if p == nil || (p.Type != PartText && p.Type != PartReasoning) || k.Len < 1 {
			return Errorf(CodeMalformed, "frame %d: kept %q (len %d) is not a text part of the frame", f.Seq, k.PartID, k.Len)
		}
		for _, o := range f.Kept[:i] {
			if o.PartID == k.PartID {
				return Errorf(CodeMalformed, "frame %d: part %q kept twice", f.Seq, k.PartID)
			}
		}
	}
	return nil
}
