package bindings

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/synccore"
)

// BenchmarkHostDelta is one delta as the Go host pays for it, from the
// WebSocket message's bytes to a published view that holds the new text:
// the Client loop's own steps for a message that arrives alone (one
// delta per flush, the worst case: a model slower than the host), process
// (Core.HandleChanges: the frames and their changes in one call) and
// flush (the mirror's patch, the View built and published). Only the
// hand-off from the socket's reader goroutine is left out. The figure must not grow with
// the text already streamed (1 KB against 10 MB) nor with the view
// (200 messages, the delta going to the one in the middle). Beside the
// mean wall time it reports the process's CPU time per delta (cpu-ns/op,
// garbage collection included) and the median delta's wall time
// (median-ns/op): on a loaded machine the mean is mostly the time other
// processes held the cores, while a cost that grows with the text shows
// in the mean CPU time.
func BenchmarkHostDelta(b *testing.B) {
	for _, c := range []struct {
		name       string
		size, msgs int
	}{{"1KB", 1 << 10, 2}, {"10MB", 10 << 20, 2}, {"200msgs", 1 << 10, 200}} {
		b.Run("wasm/"+c.name, func(b *testing.B) {
			core, err := core.NewWasmCore(context.Background(), testRuntime(b))
			if err != nil {
				b.Fatal(err)
			}
			defer core.Close()
			benchHostDelta(b, core, c.size, c.msgs)
		})
		b.Run("native/"+c.name, func(b *testing.B) {
			core := core.NewNativeCore()
			defer core.Close()
			benchHostDelta(b, core, c.size, c.msgs)
		})
	}
}

func benchHostDelta(b *testing.B, core core.Core, size, msgs int) {
	target := liveView(b, core, size, msgs)
	c := loopClient(core)
	c.loop.dirty = true
	c.flush() // the snapshot, taken and published
	const delta = "bcdefghi"
	events := make([]loopEvent, b.N)
	for i := range events {
		ev := framesEvent(b, synccore.Frame{Seq: 2 + uint64(i), Kind: synccore.FrameDelta,
			MessageID: target, Revision: 1, PartID: "p1", Offset: int64(size + i*len(delta)), Text: delta})
		events[i] = loopEvent{kind: evSub, epoch: c.loop.epoch, gen: c.loop.gen, ev: ev}
	}
	took := make([]time.Duration, b.N)
	// The setup's garbage (a 10 MB page, encoded and decoded) is not a
	// delta's cost: collect it before the clock starts.
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuNow()
	for i := range events {
		start := time.Now()
		// What the loop does with a WebSocket message that arrives alone.
		c.process(events[i], true)
		c.flush()
		took[i] = time.Since(start)
	}
	b.StopTimer()
	if d := cpuNow() - cpu; cpu > 0 && d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/op")
	for _, m := range c.View().Messages.All() {
		if m.MessageID == target {
			if got := len(m.Parts[0].Text); got != size+b.N*len(delta) {
				b.Fatalf("after %d deltas the published view holds %d bytes, want %d", b.N, got, size+b.N*len(delta))
			}
			return
		}
	}
	b.Fatalf("message %s left the published view", target)
}

// loopClient is a Client as New makes it around core, without its
// goroutines or a connection: the benchmark calls its loop's steps itself.
func loopClient(core core.Core) *Client {
	c := &Client{
		cfg:     Config{SessionID: "s1"},
		core:    core,
		log:     slog.New(slog.DiscardHandler),
		notify:  make(chan struct{}, 1),
		changed: make(chan struct{}),
		view:    View{SessionID: "s1", Status: synccore.StatusIdle},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.loop.init()
	return c
}

// liveView brings core to live holding msgs messages, alternately user and
// agent; the agent message nearest the middle is streaming, with a text
// part of size bytes. It returns that message's id.
func liveView(b testing.TB, core core.Core, size, msgs int) string {
	b.Helper()
	must := func(cmds []synccore.Command, err error) []synccore.Command {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		return cmds
	}
	must(core.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "s1", PageLimit: 200}))
	must(core.Handle(synccore.Event{Type: synccore.EvSubscriptionOpened}))
	cmds := must(core.Handle(framesEvent(b, synccore.Frame{Seq: 1, Kind: synccore.FrameHello, Protocol: 1, SessionID: "s1", HeadSequence: int64(msgs)})))
	var reqID uint64
	for _, c := range cmds {
		if c.Type == synccore.CmdFetchPage {
			reqID = c.RequestID
		}
	}
	page := synccore.MessagePage{Total: int64(msgs), StartSequence: 1, EndSequence: int64(msgs)}
	target := ""
	for i := 1; i <= msgs; i++ {
		m := synccore.Message{MessageID: fmt.Sprintf("m%d", i), SessionID: "s1", Sequence: int64(i), Revision: 1,
			Role: synccore.RoleUser, Visibility: synccore.VisibilityVisible, CreatedAt: int64(i),
			Parts: []synccore.Part{{PartID: "p1", Sequence: 1, Type: synccore.PartText, Text: "a question of some length"}}}
		if i%2 == 0 {
			m.Role, m.TurnID, m.State = synccore.RoleAgent, "t", synccore.MessageDone
			m.Parts[0].StepID, m.Parts[0].State = "s", synccore.StateDone
			if target == "" && i >= msgs/2 {
				target = m.MessageID
				m.State, m.Parts[0].State, m.Parts[0].Text = synccore.MessageStreaming, synccore.StateStreaming, strings.Repeat("a", size)
			}
		}
		page.Items = append(page.Items, m)
	}
	must(core.Handle(synccore.Event{Type: synccore.EvPage, RequestID: reqID, Data: encode(b, page)}))
	return target
}
