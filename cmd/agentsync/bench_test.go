package main

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/synccore"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/vmihailenco/msgpack/v5"
)

// BenchmarkDeltaToScreen is one streamed delta from the WebSocket
// message's bytes to the screen's text, against the native core alone:
//
//   - core: the native core takes the frame and gives its changes, and the
//     mirror patches the view's message list (what bindings' loop does per
//     delta, without the sockets);
//   - screen: the same, then the UI's Update with the new view and its
//     View (the streaming message's block rebuilt, its text re-wrapped from
//     its last line, the window's lines formatted; the terminal write that
//     Bubble Tea diffs is left out).
//
// The streamed text starts at 1 KB or 1 MB, after 200 finished messages
// rendered before the clock starts: neither the text streamed so far nor
// the history may show in a delta's cost.
func BenchmarkDeltaToScreen(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		name := fmt.Sprintf("%dKB", size>>10)
		b.Run("core/"+name, func(b *testing.B) { benchDelta(b, size, false) })
		b.Run("screen/"+name, func(b *testing.B) { benchDelta(b, size, true) })
	}
}

// BenchmarkKeyToScreen is one key typed in the composer while a 1 MB
// answer streams on screen: Update with the key, then View. The event loop
// handles a key between two views, so this and one delta's cost bound how
// long a key waits.
func BenchmarkKeyToScreen(b *testing.B) {
	c := core.NewNativeCore()
	defer c.Close()
	streamingView(b, c, 1<<20, 200)
	var mirror synccore.Mirror
	ch, err := c.Changes()
	if err != nil {
		b.Fatal(err)
	}
	list, err := mirror.Apply(ch)
	if err != nil {
		b.Fatal(err)
	}
	m := newModel(&fakeBackend{}, newTheme(io.Discard, true, false), "http://bench")
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("n")})
	_, cmd := m.Update(createdMsg{bindings.Session{SessionID: "s1"}})
	m.Update(cmd())
	m.Update(viewMsg{gen: m.gen, v: bindings.View{Status: synccore.StatusLive, Messages: list}})
	m.View()
	keys := []tea.KeyMsg{{Type: tea.KeyRunes, Runes: []rune("a")}, {Type: tea.KeyBackspace}}
	b.ReportAllocs()
	b.ResetTimer()
	var last string
	for i := 0; i < b.N; i++ {
		m.Update(keys[i%2])
		last = m.View()
	}
	b.StopTimer()
	if !strings.Contains(last, "lorem") {
		b.Fatalf("the screen lost the stream:\n%s", last)
	}
}

func benchDelta(b *testing.B, size int, screen bool) {
	const history = 200
	c := core.NewNativeCore()
	defer c.Close()
	target := streamingView(b, c, size, history)
	var mirror synccore.Mirror
	ch, err := c.Changes()
	if err != nil {
		b.Fatal(err)
	}
	list, err := mirror.Apply(ch)
	if err != nil {
		b.Fatal(err)
	}
	be := &fakeBackend{}
	m := newModel(be, newTheme(io.Discard, true, false), "http://bench")
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("n")})
	_, cmd := m.Update(createdMsg{bindings.Session{SessionID: "s1"}})
	m.Update(cmd())
	show := func(list synccore.MessageList) string {
		m.Update(viewMsg{gen: m.gen, v: bindings.View{Status: synccore.StatusLive, Messages: list}})
		return m.View()
	}
	if s := show(list); !strings.Contains(s, "lorem") {
		b.Fatalf("the screen lacks the streamed text:\n%s", s)
	}
	const delta = "ipsum dolor "
	events := make([]synccore.Event, b.N)
	for i := range events {
		events[i] = synccore.Event{Type: synccore.EvFrames, Data: encodeFrames(b, []synccore.Frame{{Seq: 2 + uint64(i), Kind: synccore.FrameDelta,
			MessageID: target, Revision: 1, PartID: "p1", Offset: int64(size + i*len(delta)), Text: delta}})}
	}
	runtime.GC()
	b.ReportAllocs()
	b.SetBytes(int64(len(delta)))
	b.ResetTimer()
	var last string
	for i := range events {
		_, ch, err := c.HandleChanges(events[i])
		if err != nil || ch == nil {
			b.Fatalf("delta %d: %v", i, err)
		}
		if list, err = mirror.Apply(*ch); err != nil {
			b.Fatal(err)
		}
		if screen {
			last = show(list)
		}
	}
	b.StopTimer()
	if screen && !strings.Contains(last, "ipsum dolor") {
		b.Fatalf("the last screen lacks the deltas:\n%s", last)
	}
}

// streamingView makes c live on a session of msgs finished messages and a
// streaming reply of size bytes, and returns the reply's id.
func streamingView(b *testing.B, c core.Core, size, msgs int) string {
	b.Helper()
	must := func(cmds []synccore.Command, err error) []synccore.Command {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		return cmds
	}
	must(c.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "s1", PageLimit: synccore.MaxPageLimit}))
	must(c.Handle(synccore.Event{Type: synccore.EvSubscriptionOpened}))
	total := msgs + 1
	cmds := must(c.Handle(synccore.Event{Type: synccore.EvFrames, Data: encodeFrames(b,
		[]synccore.Frame{{Seq: 1, Kind: synccore.FrameHello, Protocol: synccore.ProtocolVersion, SessionID: "s1", HeadSequence: int64(total)}})}))
	var reqID uint64
	for _, cmd := range cmds {
		if cmd.Type == synccore.CmdFetchPage {
			reqID = cmd.RequestID
		}
	}
	page := synccore.MessagePage{Total: int64(total), StartSequence: 1, EndSequence: int64(total)}
	words := strings.Repeat("lorem ipsum **dolor** sit amet ", size/31+1)[:size]
	for i := 1; i <= total; i++ {
		m := synccore.Message{MessageID: fmt.Sprintf("m%d", i), SessionID: "s1", Sequence: int64(i), Revision: 1,
			Role: synccore.RoleUser, Visibility: synccore.VisibilityVisible, CreatedAt: int64(i),
			Parts: []synccore.Part{{PartID: "p1", Sequence: 1, Type: synccore.PartText, Text: fmt.Sprintf("question %d", i)}}}
		if i%2 == 0 || i == total {
			m.Role, m.TurnID, m.State = synccore.RoleAgent, fmt.Sprintf("t%d", i), synccore.MessageDone
			m.Parts[0].StepID, m.Parts[0].State = "s", synccore.StateDone
			m.Parts[0].Text = "an **answer** with `code` and a [link](https://example.com)"
		}
		if i == total {
			m.State, m.Parts[0].State, m.Parts[0].Text = synccore.MessageStreaming, synccore.StateStreaming, words
		}
		page.Items = append(page.Items, m)
	}
	must(c.Handle(synccore.Event{Type: synccore.EvPage, RequestID: reqID, Data: encodeFrames(b, page)}))
	return fmt.Sprintf("m%d", total)
}

func encodeFrames(b testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}
