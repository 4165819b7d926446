package synccore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMessageListMatchesASlice drives lists through random pushes and sets
// (and rebuilds from a slice) beside a plain slice: every list read back
// equals the slice, and every list handed out earlier still holds what it
// held, at every size across the trie's levels.
func TestMessageListMatchesASlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type snapshot struct {
		list MessageList
		want []*Message
	}
	var l MessageList
	var want []*Message
	var kept []snapshot
	for step := range 40000 {
		switch op := rng.IntN(10); {
		case op < 6 || len(want) == 0:
			m := &Message{MessageID: fmt.Sprint("m", step)}
			l, want = l.push(m), append(want, m)
		case op < 9:
			i := rng.IntN(len(want))
			m := &Message{MessageID: fmt.Sprint("s", step)}
			l = l.set(i, m)
			want = append([]*Message(nil), want...)
			want[i] = m
		default:
			l = NewMessageList(want)
		}
		if step%997 == 0 {
			kept = append(kept, snapshot{l, append([]*Message(nil), want...)})
		}
	}
	kept = append(kept, snapshot{l, want})
	for _, s := range kept {
		if s.list.Len() != len(s.want) {
			t.Fatalf("list of %d messages has Len %d", len(s.want), s.list.Len())
		}
		for i, m := range s.want {
			if s.list.At(i) != m {
				t.Fatalf("list of %d: At(%d) is %s, want %s", len(s.want), i, s.list.At(i).MessageID, m.MessageID)
			}
		}
		n := 0
		for i, m := range s.list.All() {
			if i != n || m != s.want[i] {
				t.Fatalf("list of %d: All yields %d:%s at %d", len(s.want), i, m.MessageID, n)
			}
			n++
		}
		if n != len(s.want) {
			t.Fatalf("All yielded %d of %d", n, len(s.want))
		}
	}
}

func TestMessageListBounds(t *testing.T) {
	var empty MessageList
	if empty.Len() != 0 || len(empty.Values()) != 0 {
		t.Fatal("the zero list is not empty")
	}
	for range empty.All() {
		t.Fatal("the zero list yields a message")
	}
	l := NewMessageList([]*Message{{MessageID: "a"}, {MessageID: "b"}})
	for _, i := range []int{-1, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("At(%d) of 2 did not panic", i)
				}
			}()
			l.At(i)
		}()
	}
	for i := range l.All() { // stopping early stops the walk
		if i > 0 {
			t.Fatal("All went on after the loop broke")
		}
		break
	}
}

// TestMirrorSharesWhatDidNotChange: a delta to one message of many makes
// one new *Message; the list handed out before is unchanged; a page of
// older messages lands in order; a streaming part's builder is made when
// it arrives whole, so the delta appends without copying the text.
func TestMirrorSharesWhatDidNotChange(t *testing.T) {
	var mir Mirror
	msg := func(seq int64, text string, state PartState) *Message {
		return &Message{MessageID: fmt.Sprint("m", seq), Sequence: seq,
			Parts: []Part{{PartID: "p", Type: PartText, State: state, Text: text}}}
	}
	var reset Changes
	reset.Reset = true
	for seq := int64(100); seq < 300; seq++ {
		state := StateDone
		if seq == 200 {
			state = StateStreaming
		}
		m := msg(seq, "x", state)
		reset.Messages = append(reset.Messages, MessageChange{MessageID: m.MessageID, Message: m})
	}
	before, err := mir.Apply(reset)
	if err != nil {
		t.Fatal(err)
	}
	after, err := mir.Apply(Changes{Messages: []MessageChange{{MessageID: "m200", Appends: []TextAppend{{Index: 0, Text: "yz"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range before.Len() {
		b, a := before.At(i), after.At(i)
		if (a == b) == (b.MessageID == "m200") {
			t.Fatalf("message %s: shared %v after a delta to m200", b.MessageID, a == b)
		}
	}
	if before.At(100).Parts[0].Text != "x" || after.At(100).Parts[0].Text != "xyz" {
		t.Fatalf("m200 before %q after %q", before.At(100).Parts[0].Text, after.At(100).Parts[0].Text)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		_ = mir.Patch(Changes{Messages: []MessageChange{{MessageID: "m200", Appends: []TextAppend{{Index: 0, Text: "ab"}}}}})
	}); allocs > 8 {
		t.Fatalf("a delta to one of 200 messages costs %v allocations", allocs)
	}
	older := Changes{Messages: []MessageChange{{MessageID: "m5", Message: msg(5, "o", StateDone)}, {MessageID: "m7", Message: msg(7, "o", StateDone)}, {MessageID: "m300", Message: msg(300, "n", StateDone)}}}
	l, err := mir.Apply(older)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 203 || l.At(0).MessageID != "m5" || l.At(1).MessageID != "m7" || l.At(202).MessageID != "m300" {
		t.Fatalf("after a page of older messages: %d messages, first %s", l.Len(), l.At(0).MessageID)
	}
	if _, err := mir.Apply(Changes{Messages: []MessageChange{{MessageID: "m7", Appends: []TextAppend{{Index: 1, Text: "?"}}}}}); err == nil {
		t.Fatal("an append to a part the message lacks was taken")
	}
}
