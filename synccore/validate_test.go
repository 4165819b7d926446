package synccore

import (
	"errors"
	"testing"
)

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "untyped"
	}
	return ""
}

func TestValidatePart(t *testing.T) {
	approval := map[string]any{"kind": "approval", "tool_call_id": "c1"}
	cases := []struct {
		name string
		role Role
		p    Part
		want string
	}{
		{"user text", RoleUser, Part{PartID: "p", Sequence: 1, Type: PartText, Text: "hi"}, ""},
		{"user context", RoleUser, Part{PartID: "p", Sequence: 1, Type: PartContext, Tag: "reference", Context: "x"}, ""},
		{"unknown type", RoleAgent, Part{PartID: "p", Sequence: 1, Type: "video"}, CodeUnknownPartType},
		{"user text with state", RoleUser, Part{PartID: "p", Sequence: 1, Type: PartText, State: StateDone}, CodeInvalidPart},
		{"user tool", RoleUser, Part{PartID: "p", Sequence: 1, Type: PartTool, ToolCallID: "c", ToolName: "n"}, CodeInvalidPart},
		{"agent context", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartContext}, CodeInvalidPart},
		{"missing id", RoleAgent, Part{Sequence: 1, Type: PartText, State: StateDone}, CodeInvalidPart},
		{"zero sequence", RoleAgent, Part{PartID: "p", Type: PartText, State: StateDone}, CodeInvalidPart},
		{"agent text no state", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartText}, CodeInvalidPart},
		{"agent text streaming", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartText, State: StateStreaming}, ""},
		{"tool bad state", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartTool, State: "flying", ToolCallID: "c", ToolName: "n"}, CodeInvalidPart},
		{"tool ok", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartTool, State: ToolRunning, ToolCallID: "c", ToolName: "n"}, ""},
		{"tool without call id", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartTool, State: ToolRunning, ToolName: "n"}, CodeInvalidPart},
		{"interaction ok", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartInteraction, Status: InteractionPending, InteractionID: "i", Request: approval}, ""},
		{"interaction bad status", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartInteraction, Status: "maybe", InteractionID: "i", Request: approval}, CodeInvalidPart},
		{"interaction bad kind", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartInteraction, Status: InteractionPending, InteractionID: "i", Request: map[string]any{"kind": "poll"}}, CodeInvalidPart},
		{"interaction with state", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartInteraction, Status: InteractionPending, State: "x", InteractionID: "i", Request: approval}, CodeInvalidPart},
		{"action ok", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartAction, State: ActionPending, ActionID: "a", ActionType: "stop"}, ""},
		{"action bad state", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartAction, State: "done", ActionID: "a", ActionType: "stop"}, CodeInvalidPart},
		{"error ok", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartError, Scope: ErrorScopeTurn, Code: "x"}, ""},
		{"error bad scope", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartError, Scope: "galaxy", Code: "x"}, CodeInvalidPart},
		{"error with state", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartError, Scope: ErrorScopeTurn, Code: "x", State: StateDone}, CodeInvalidPart},
		{"file without url", RoleAgent, Part{PartID: "p", Sequence: 1, Type: PartFile}, CodeInvalidPart},
		{"data ok", RoleUser, Part{PartID: "p", Sequence: 1, Type: PartData, DataType: "chart", Data: []any{int8(1)}}, ""},
	}
	for _, tc := range cases {
		if got := code(validatePartValue(tc.role, tc.p)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestValidateMessage(t *testing.T) {
	ok := agentMsg("m", 2, 1, MessageStreaming, textPart("a", 1, StateDone, "x"), textPart("b", 2, StateStreaming, "y"))
	if err := validateMessage(ok); err != nil {
		t.Fatal(err)
	}
	mut := func(f func(*Message)) Message {
		m := ok
		m.Parts = append([]Part(nil), ok.Parts...)
		f(&m)
		return m
	}
	cases := []struct {
		name string
		m    Message
		want string
	}{
		{"no id", mut(func(m *Message) { m.MessageID = "" }), CodeInvalidMessage},
		{"no session", mut(func(m *Message) { m.SessionID = "" }), CodeInvalidMessage},
		{"sequence 0", mut(func(m *Message) { m.Sequence = 0 }), CodeInvalidMessage},
		{"revision 0", mut(func(m *Message) { m.Revision = 0 }), CodeInvalidMessage},
		{"bad role", mut(func(m *Message) { m.Role = "robot" }), CodeInvalidMessage},
		{"agent no state", mut(func(m *Message) { m.State = "" }), CodeInvalidMessage},
		{"user with state", userMsgWith(func(m *Message) { m.State = MessageDone }), CodeInvalidMessage},
		{"user no parts", userMsgWith(func(m *Message) { m.Parts = nil }), CodeInvalidMessage},
		{"bad visibility", mut(func(m *Message) { m.Visibility = "secret" }), CodeInvalidMessage},
		{"parts out of order", mut(func(m *Message) { m.Parts[0], m.Parts[1] = m.Parts[1], m.Parts[0] }), CodeInvalidMessage},
		{"duplicate part id", mut(func(m *Message) { m.Parts[1].PartID = "a" }), CodeInvalidMessage},
		{"unknown part type", mut(func(m *Message) { m.Parts[1].Type = "video" }), CodeUnknownPartType},
		{"agent-only type in user message", userMsgWith(func(m *Message) { m.Parts[0].Type = PartReasoning }), CodeInvalidPart},
	}
	for _, tc := range cases {
		if got := code(validateMessage(tc.m)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func userMsgWith(f func(*Message)) Message {
	m := userMsg("u", 1, "hi")
	f(&m)
	return m
}

func TestValidateTransition(t *testing.T) {
	old := agentMsg("m", 2, 3, MessageStreaming, textPart("a", 1, StateDone, "x"), textPart("b", 2, StateStreaming, "y"))
	next := func(f func(*Message)) Message {
		m := old
		m.Revision = 4
		m.Parts = append([]Part(nil), old.Parts...)
		f(&m)
		return m
	}
	cases := []struct {
		name string
		old  Message
		new  Message
		want string
	}{
		{"append a part", old, next(func(m *Message) { m.Parts = append(m.Parts, textPart("c", 3, StateDone, "z")) }), ""},
		{"close", old, next(func(m *Message) { m.State = MessageDone }), ""},
		{"revision backwards", old, next(func(m *Message) { m.Revision = 2 }), CodeRevisionBackward},
		{"revision equal", old, next(func(m *Message) { m.Revision = 3 }), CodeRevisionBackward},
		{"sequence changed", old, next(func(m *Message) { m.Sequence = 7 }), CodeSequenceChanged},
		{"part removed", old, next(func(m *Message) { m.Parts = m.Parts[:1] }), CodeSequenceChanged},
		{"parts swapped", old, next(func(m *Message) {
			m.Parts[0], m.Parts[1] = m.Parts[1], m.Parts[0]
			m.Parts[0].Sequence, m.Parts[1].Sequence = 1, 2
		}), CodeSequenceChanged},
		{"part type changed", old, next(func(m *Message) { m.Parts[1].Type = PartReasoning }), CodeInvalidPart},
		{"done is final", next(func(m *Message) { m.State = MessageDone }), func() Message {
			m := next(func(m *Message) { m.State = MessageDone })
			m.Revision = 5
			return m
		}(), CodeDoneIsFinal},
		{"user message is final", userMsg("u", 1, "hi"), func() Message { m := userMsg("u", 1, "hi!"); m.Revision = 2; return m }(), CodeDoneIsFinal},
		{"other message", old, next(func(m *Message) { m.MessageID = "other" }), CodeInvalidMessage},
		{"invalid new", old, next(func(m *Message) { m.Parts[0].Type = "video" }), CodeUnknownPartType},
	}
	for _, tc := range cases {
		if got := code(validateTransition(tc.old, tc.new)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	cases := []struct {
		attempt int
		jitter  int64
		want    int64
	}{
		{0, 500, 0}, {1, 1000, 250}, {2, 1000, 500}, {3, 1000, 1000}, {1, 0, 125}, {1, 500, 187},
		{8, 1000, 30000}, {50, 1000, 30000}, {50, 0, 15000}, {1, 5000, 250}, {1, -3, 125},
	}
	for _, tc := range cases {
		if got := backoffDelay(tc.attempt, tc.jitter); got != tc.want {
			t.Errorf("backoffDelay(%d, %d) = %d, want %d", tc.attempt, tc.jitter, got, tc.want)
		}
	}
}
