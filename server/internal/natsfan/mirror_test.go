package natsfan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/agentsync/agentsync/synccore"
)

// streamOwner plays a turn the way the session engine publishes it: parts
// added (part frames), text streamed (deltas), parts finished, mid-stream
// commits (message frames of the streaming message), the close. After
// every frame it knows its projection: a part frame per part changed
// since the last commit, as session's projectionFrames builds it.
type streamOwner struct {
	rng       *rand.Rand
	committed synccore.Message
	parts     []synccore.Part
	dirty     []bool
	frames    []synccore.Frame
	projs     [][]synccore.Frame // projs[k]: the projection after frames[:k]
}

func newStreamOwner(seed uint64) *streamOwner {
	o := &streamOwner{rng: rand.New(rand.NewPCG(seed, 1))}
	o.committed = synccore.Message{MessageID: "msg_a", SessionID: "ses_1", Sequence: 2, Revision: 1,
		Role: synccore.RoleAgent, State: synccore.MessageStreaming}
	o.projs = append(o.projs, nil)
	return o
}

func (o *streamOwner) emit(f synccore.Frame) {
	o.frames = append(o.frames, f)
	var proj []synccore.Frame
	for i, p := range o.parts {
		if o.dirty[i] {
			proj = append(proj, synccore.Frame{Kind: synccore.FramePart, MessageID: o.committed.MessageID, Revision: o.committed.Revision, Part: &p})
		}
	}
	o.projs = append(o.projs, proj)
}

func (o *streamOwner) partFrame(i int) synccore.Frame {
	p := o.parts[i]
	return synccore.Frame{Kind: synccore.FramePart, MessageID: o.committed.MessageID, Revision: o.committed.Revision, Part: &p}
}

func (o *streamOwner) commit(state synccore.MessageState) {
	m := o.committed
	m.Revision++
	m.State = state
	m.Parts = append([]synccore.Part(nil), o.parts...)
	o.committed = m
	clear(o.dirty)
	o.emit(synccore.Frame{Kind: synccore.FrameMessage, Message: &m})
}

var words = []string{"lorem ", "ipsum ", "café ", "naïve ", "— ", "smörgåsbord ", "x"}

func (o *streamOwner) play(steps int) {
	for range steps {
		var streaming []int
		for i, p := range o.parts {
			if p.State == synccore.StateStreaming {
				streaming = append(streaming, i)
			}
		}
		switch r := o.rng.IntN(10); {
		case r == 0 || len(streaming) == 0:
			n := len(o.parts) + 1
			typ := synccore.PartText
			if o.rng.IntN(3) == 0 {
				typ = synccore.PartReasoning
			}
			o.parts = append(o.parts, synccore.Part{PartID: fmt.Sprintf("p%d", n), Sequence: int64(n), Type: typ, State: synccore.StateStreaming})
			o.dirty = append(o.dirty, true)
			o.emit(o.partFrame(n - 1))
		case r == 1:
			o.commit(synccore.MessageStreaming)
		case r == 2:
			i := streaming[o.rng.IntN(len(streaming))]
			o.parts[i].State = synccore.StateDone
			o.dirty[i] = true
			o.emit(o.partFrame(i))
		default:
			i := streaming[o.rng.IntN(len(streaming))]
			w := words[o.rng.IntN(len(words))]
			off := int64(len(o.parts[i].Text))
			o.parts[i].Text += w
			o.dirty[i] = true
			o.emit(synccore.Frame{Kind: synccore.FrameDelta, MessageID: o.committed.MessageID, Revision: o.committed.Revision,
				PartID: o.parts[i].PartID, Offset: off, Text: w})
		}
	}
	for i := range o.parts {
		o.parts[i].State = synccore.StateDone
	}
	o.commit(synccore.MessageDone)
}

// Whatever point of a turn a follow starts at (its snapshot: hello, the
// committed revision, the projection) and whichever frames it applies
// after, its join frames are the owner's projection at that point: what
// a subscriber joining the owner itself would get.
func TestMirrorJoinIsTheOwnersProjection(t *testing.T) {
	for seed := range uint64(200) {
		o := newStreamOwner(seed)
		start := o.committed
		o.play(60)
		for k := range len(o.frames) + 1 {
			// The snapshot is taken at 0, then frames[:k] come.
			m := mirror{sessionID: "ses_1"}
			snap := []synccore.Frame{{Kind: synccore.FrameHello, HeadSequence: 2}, {Kind: synccore.FrameMessage, Message: &start}}
			if err := m.apply(snap); err != nil {
				t.Fatal(err)
			}
			if err := m.apply(o.frames[:k]); err != nil {
				t.Fatalf("seed %d, after %d frames: %v", seed, k, err)
			}
			join := m.join()
			if join[0].Kind != synccore.FrameHello || join[0].HeadSequence != 2 {
				t.Fatalf("seed %d: hello %+v", seed, join[0])
			}
			if got, want := join[1:], o.projs[k]; !sameFrames(got, want) {
				t.Fatalf("seed %d, after %d frames (%s):\njoin %s\nowner %s", seed, k, o.frames[max(k-1, 0)].Kind, show(got), show(want))
			}
		}
	}
}

// A delta that does not land at the end of the text the mirror holds, or
// for a part it does not know, is an error: frames were lost.
func TestMirrorRefusesWhatDoesNotFollowOn(t *testing.T) {
	open := &synccore.Message{MessageID: "m", Sequence: 1, Revision: 1, Role: synccore.RoleAgent, State: synccore.MessageStreaming,
		Parts: []synccore.Part{{PartID: "p1", Sequence: 1, Type: synccore.PartText, State: synccore.StateStreaming, Text: "abc"}}}
	for name, f := range map[string]synccore.Frame{
		"offset past the end":   {Kind: synccore.FrameDelta, MessageID: "m", PartID: "p1", Offset: 4, Text: "d"},
		"offset inside":         {Kind: synccore.FrameDelta, MessageID: "m", PartID: "p1", Offset: 2, Text: "d"},
		"unknown part":          {Kind: synccore.FrameDelta, MessageID: "m", PartID: "p9", Offset: 0, Text: "d"},
		"another message":       {Kind: synccore.FrameDelta, MessageID: "n", PartID: "p1", Offset: 3, Text: "d"},
		"part without its part": {Kind: synccore.FramePart, MessageID: "m"},
	} {
		m := mirror{}
		if err := m.apply([]synccore.Frame{{Kind: synccore.FrameMessage, Message: open}}); err != nil {
			t.Fatal(err)
		}
		if err := m.apply([]synccore.Frame{f}); err == nil {
			t.Errorf("%s: applied", name)
		}
	}
}

func sameFrames(a, b []synccore.Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.MessageID != y.MessageID || x.Revision != y.Revision || !reflect.DeepEqual(*x.Part, *y.Part) {
			return false
		}
	}
	return true
}

func show(frames []synccore.Frame) string {
	s := ""
	for _, f := range frames {
		s += fmt.Sprintf("[%s r%d %s %s %q] ", f.Kind, f.Revision, f.Part.PartID, f.Part.State, f.Part.Text)
	}
	return s
}
