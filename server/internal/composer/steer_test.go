package composer

import (
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

func seqUser(seq int64, s string) synccore.Message {
	m := user(synccore.VisibilityVisible, synccore.Part{Type: synccore.PartText, Text: s})
	m.Sequence = seq
	return m
}

func marker(step string, seq any) synccore.Part {
	return synccore.Part{Type: synccore.PartData, StepID: step, DataType: DataTypeRead, Data: map[string]any{"user_sequence": seq}}
}

func said(s string) model.InputMessage {
	return model.InputMessage{Role: model.RoleAssistant, Content: []model.InputContent{text(s)}}
}

func asked(s string) model.InputMessage {
	return model.InputMessage{Role: model.RoleUser, Content: []model.InputContent{text(s)}}
}

// TestComposePlacesSteersAtTheirMarker: a steer reaches the model where the
// step that read it begins (issue 26: placed after the whole agent message,
// a steer of scenario:tools was read as new by every step and looped to
// too_many_steps). The marker's number may come back from the store as any
// integer type.
func TestComposePlacesSteersAtTheirMarker(t *testing.T) {
	for _, seq := range []any{int64(3), int8(3), uint8(3), uint64(3), 3, float64(3)} {
		a := agent(
			synccore.Part{Type: synccore.PartText, StepID: "step-1", Text: "first"},
			marker("step-2", seq),
			synccore.Part{Type: synccore.PartText, StepID: "step-2", Text: "second, having read the steer"},
			synccore.Part{Type: synccore.PartText, StepID: "step-3", Text: "third"},
		)
		a.Sequence = 2
		history := []synccore.Message{seqUser(1, "start"), a, seqUser(3, "steer"), seqUser(4, "after the turn")}
		want := []model.InputMessage{asked("start"), said("first"), asked("steer"),
			said("second, having read the steer"), said("third"), asked("after the turn")}
		if got := Compose(history); !reflect.DeepEqual(got, want) {
			t.Fatalf("marker %T:\n got %#v\nwant %#v", seq, got, want)
		}
	}
}

// Two steers read by one step come in their order at its marker; one the
// turn never read stays after the message.
func TestComposeSteersReadTogether(t *testing.T) {
	a := agent(
		synccore.Part{Type: synccore.PartText, StepID: "step-1", Text: "first"},
		marker("step-2", int64(4)),
		synccore.Part{Type: synccore.PartText, StepID: "step-2", Text: "second"},
	)
	a.Sequence = 2
	history := []synccore.Message{seqUser(1, "start"), a, seqUser(3, "one"), seqUser(4, "two"), seqUser(5, "unread")}
	want := []model.InputMessage{asked("start"), said("first"), asked("one"), asked("two"), said("second"), asked("unread")}
	if got := Compose(history); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}
