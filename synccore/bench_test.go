package synccore

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// bench_test.go: the cost of one delta must stay flat as the part grows
// (1 KB vs 10 MB of text already held), through handleBytes (the bytes path
// of the WebAssembly hosts) and the native Handle. BaselineDecode decodes the
// same frame with plain msgpack/v5 into a Frame, the cost a naive client
// pays before doing anything.

const deltaText = "lorem ipsum " // 12 bytes per delta

// streamingClient is live with one message whose streaming part holds size bytes.
func streamingClient(b *testing.B, size int) *Client {
	c := liveClient(b, agentMsg("m1", 1, 1, MessageStreaming, textPart("p1", 1, StateStreaming, strings.Repeat("x", size))))
	return c
}

// deltaEvents pre-encodes n one-frame WebSocket messages continuing the part.
func deltaEvents(n, size int, asBytes bool) ([][]byte, []Event) {
	var raw [][]byte
	var evs []Event
	off := int64(size)
	for i := range n {
		data := encodeFrames([]Frame{{Seq: uint64(i + 2), Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: off, Text: deltaText}})
		off += int64(len(deltaText))
		if asBytes {
			raw = append(raw, encodeEvent(Event{Type: EvFrames, Data: data}))
		} else {
			evs = append(evs, Event{Type: EvFrames, Data: data})
		}
	}
	return raw, evs
}

func BenchmarkApplyDelta(b *testing.B) {
	for _, size := range []int{1 << 10, 10 << 20} {
		name := fmt.Sprintf("%dKB", size>>10)
		b.Run("HandleBytes/"+name, func(b *testing.B) {
			c := streamingClient(b, size)
			raw, _ := deltaEvents(b.N, size, true)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuNow()
			for i := range b.N {
				c.handleBytes(raw[i])
			}
			b.StopTimer()
			reportCPU(b, cpu)
			if got := c.byID["m1"].textLen(0); got != size+b.N*len(deltaText) {
				b.Fatalf("text length %d", got)
			}
		})
		// The WebAssembly module's path: the Output appended to a reused
		// buffer, no allocation per delta.
		b.Run("AppendHandleBytes/"+name, func(b *testing.B) {
			c := streamingClient(b, size)
			raw, _ := deltaEvents(b.N, size, true)
			var out []byte
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuNow()
			for i := range b.N {
				out = c.appendHandleBytes(out[:0], raw[i])
			}
			b.StopTimer()
			reportCPU(b, cpu)
			if got := c.byID["m1"].textLen(0); got != size+b.N*len(deltaText) {
				b.Fatalf("text length %d", got)
			}
		})
		b.Run("Handle/"+name, func(b *testing.B) {
			c := streamingClient(b, size)
			_, evs := deltaEvents(b.N, size, false)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuNow()
			for i := range b.N {
				if _, err := c.Handle(evs[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportCPU(b, cpu)
			if got := c.byID["m1"].textLen(0); got != size+b.N*len(deltaText) {
				b.Fatalf("text length %d", got)
			}
		})
	}
	b.Run("BaselineGenericDecodeFrames", func(b *testing.B) {
		raw := encodeFrames([]Frame{{Seq: 2, Kind: FrameDelta, MessageID: "m1", Revision: 1, PartID: "p1", Offset: 1024, Text: deltaText}})
		b.ReportAllocs()
		b.ResetTimer()
		cpu := cpuNow()
		for range b.N {
			var fs []Frame
			if err := msgpack.Unmarshal(raw, &fs); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
}

// BenchmarkSnapshotPage200 decodes and applies a head page of 200 messages,
// 4 parts each, about 1 KB of text per message.
func BenchmarkSnapshotPage200(b *testing.B) {
	var items []Message
	for i := range 200 {
		seq := int64(i + 1)
		items = append(items, agentMsg(fmt.Sprintf("m%d", seq), seq, 2, MessageDone,
			textPart("a", 1, StateDone, strings.Repeat("r", 256)),
			Part{PartID: "t", Sequence: 2, Type: PartTool, State: ToolOutputAvailable, ToolCallID: "c", ToolName: "read",
				Input: map[string]any{"path": "README.md"}, Output: map[string]any{"bytes": 4096}},
			textPart("b", 3, StateDone, strings.Repeat("t", 512)),
			textPart("c", 4, StateDone, strings.Repeat("u", 256))))
	}
	page := encodePage(MessagePage{Items: items, Total: 200, StartSequence: 1, EndSequence: 200})
	ev := encodeEvent(Event{Type: EvPage, RequestID: 1, Data: page})
	start := encodeEvent(Event{Type: EvStart, SessionID: "s1", PageLimit: 200})
	hello := encodeEvent(framesEvent(Frame{Seq: 1, Kind: FrameHello, Protocol: 1, SessionID: "s1"}))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuNow()
	defer reportCPU(b, cpu)
	for range b.N {
		// A fresh client each time; start and hello cost about 1 µs of the total.
		c := NewClient(Options{})
		c.handleBytes(start)
		c.handleBytes(hello)
		out := c.handleBytes(ev)
		if !bytes.Contains(out, []byte("reset")) || len(c.win) != 200 {
			b.Fatalf("page not applied: %q", out)
		}
	}
}

// BenchmarkSnapshotPage200Generic is the baseline of the page benchmark:
// msgpack/v5 decoding the same page into a MessagePage, nothing applied.
func BenchmarkSnapshotPage200Generic(b *testing.B) {
	var items []Message
	for i := range 200 {
		seq := int64(i + 1)
		items = append(items, agentMsg(fmt.Sprintf("m%d", seq), seq, 2, MessageDone,
			textPart("a", 1, StateDone, strings.Repeat("r", 256)),
			Part{PartID: "t", Sequence: 2, Type: PartTool, State: ToolOutputAvailable, ToolCallID: "c", ToolName: "read",
				Input: map[string]any{"path": "README.md"}, Output: map[string]any{"bytes": 4096}},
			textPart("b", 3, StateDone, strings.Repeat("t", 512)),
			textPart("c", 4, StateDone, strings.Repeat("u", 256))))
	}
	page := encodePage(MessagePage{Items: items, Total: 200, StartSequence: 1, EndSequence: 200})
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	cpu := cpuNow()
	defer reportCPU(b, cpu)
	for range b.N {
		var p MessagePage
		if err := msgpack.Unmarshal(page, &p); err != nil || len(p.Items) != 200 {
			b.Fatal(err)
		}
	}
}

// reportCPU adds the CPU time per operation since start (0 where the
// platform cannot tell).
func reportCPU(b *testing.B, start time.Duration) {
	if d := cpuNow() - start; start > 0 && d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
