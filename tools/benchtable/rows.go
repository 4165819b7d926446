package main

import "fmt"

// row is one line of the table: a figure, the same-run baseline it is
// compared against (if any), and the target the issues set for it.
type row struct {
	Bench    string // "<pkg>.<BenchmarkName without Benchmark>[/sub]"
	Metric   string // the reported unit to show, e.g. "ns/op"
	Baseline string // empty: no baseline measures the same thing
	BMetric  string // unit of the baseline; empty = Metric
	Target   target
}

func (r row) BaselineMetric() string {
	if r.BMetric != "" {
		return r.BMetric
	}
	return r.Metric
}

// rows lists every benchmark of the repository with its baseline. A
// baseline is only divided by when its unit counts the same thing
// (dimension): a ratio of commits/s to ns/op would mean nothing.
var rows = []row{
	// The core, natively. Baseline: decoding the same frame with msgpack/v5's reflection.
	{"synccore.ApplyDelta/Handle/1KB", "ns/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", atMost(250, "<=250 ns")},
	{"synccore.ApplyDelta/Handle/10240KB", "ns/op", "synccore.ApplyDelta/Handle/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"synccore.ApplyDelta/HandleBytes/1KB", "ns/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", atMost(250, "<=250 ns")},
	{"synccore.ApplyDelta/HandleBytes/10240KB", "ns/op", "synccore.ApplyDelta/HandleBytes/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"synccore.ApplyDelta/Handle/1KB", "allocs/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", atMost(1, "<=1 alloc")},
	{"synccore.ApplyDelta/AppendHandleBytes/1KB", "ns/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", note("(bytes in)")},
	{"synccore.ApplyDelta/AppendHandleBytes/1KB", "allocs/op", "", "", atMost(0, "0 allocs")},
	{"synccore.ApplyDelta/AppendHandleBytes/10240KB", "ns/op", "synccore.ApplyDelta/AppendHandleBytes/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"synccore.SnapshotPage200", "ns/op", "synccore.SnapshotPage200Generic", "", atMost(1e6, "<=1 ms")},
	// A 20 MiB tus upload on loopback (stored, hashed, turned into a blob) beside one plain PUT of the same bytes.
	{"server/uploads.Upload", "ns/op", "server/uploads.PlainPut", "", ratioAtMost(2, "<=2x of a plain PUT")},
	{"wire.DecodePart", "ns/op", "server/store/sqlite.DecodePart/reflect", "", note("(stored part bodies)")},
	{"wire.AppendFrames", "ns/frame", "server/internal/api.FrameEncoder/reflection", "", note("(64-frame batch)")},
	// The core under wazero, beside the native core in the same run.
	{"bindings.ApplyDelta/wasm/1KB", "ns/op", "bindings.ApplyDelta/native/1KB", "", atMost(3000, "<=3 us")},
	{"bindings.ApplyDelta/wasm/10MB", "ns/op", "bindings.ApplyDelta/wasm/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"bindings.ApplyDelta/native/10MB", "ns/op", "bindings.ApplyDelta/native/1KB", "", note("(native, through Core)")},
	// The Go host's whole path per delta (frames in, changes out, view patched), one delta per flush.
	{"bindings.HostDelta/wasm/1KB", "ns/op", "bindings.HostDelta/native/1KB", "", atMost(5000, "<=5 us")},
	{"bindings.HostDelta/wasm/10MB", "ns/op", "bindings.HostDelta/wasm/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"bindings.HostDelta/wasm/200msgs", "ns/op", "bindings.HostDelta/wasm/1KB", "", note("(200 messages, delta to the middle)")},
	{"bindings.HostDelta/native/10MB", "ns/op", "bindings.HostDelta/native/1KB", "", note("(native)")},
	{"bindings.HostDelta/native/200msgs", "ns/op", "bindings.HostDelta/native/1KB", "", note("(native)")},
	// The same in process CPU time (garbage collection included), steadier on a loaded machine.
	{"bindings.HostDelta/wasm/1KB", "cpu-ns/op", "bindings.HostDelta/native/1KB", "", atMost(5000, "<=5 us")},
	{"bindings.HostDelta/wasm/10MB", "cpu-ns/op", "bindings.HostDelta/wasm/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"bindings.HostDelta/wasm/200msgs", "cpu-ns/op", "bindings.HostDelta/wasm/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	// The median delta's wall time: what a delta costs when no other process holds the core.
	{"bindings.HostDelta/wasm/1KB", "median-ns/op", "bindings.HostDelta/native/1KB", "", atMost(5000, "<=5 us")},
	{"bindings.HostDelta/wasm/10MB", "median-ns/op", "bindings.HostDelta/wasm/1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	// A published view shares what did not change: bytes per delta follow the delta, not the history.
	{"bindings.HostDelta/wasm/200msgs", "B/op", "bindings.HostDelta/wasm/1KB", "", ratioAtMost(2, "O(delta): <=2x of 1KB")},
	{"bindings.HostDelta/native/200msgs", "B/op", "bindings.HostDelta/native/1KB", "", ratioAtMost(2, "O(delta): <=2x of 1KB")},
	// The terminal client: a delta from its frame to the screen's text (core, mirror, Update, View) against the native core and mirror alone.
	{"cmd/agentsync.DeltaToScreen/screen/1KB", "ns/op", "cmd/agentsync.DeltaToScreen/core/1KB", "", atMost(1e6, "<=1 ms: far under a frame")},
	{"cmd/agentsync.DeltaToScreen/screen/1024KB", "ns/op", "cmd/agentsync.DeltaToScreen/core/1024KB", "", atMost(1e6, "<=1 ms, 1 MB streamed")},
	{"cmd/agentsync.DeltaToScreen/screen/1024KB", "B/op", "cmd/agentsync.DeltaToScreen/screen/1KB", "", ratioAtMost(2, "O(delta): <=2x of 1KB")},
	// A key typed while 1 MB streams on screen: the UI answers it between two views.
	{"cmd/agentsync.KeyToScreen", "ns/op", "", "", atMost(5e6, "<=5 ms (a key within 50 ms)")},
	// A program following a long answer from a real server, in a process of its own (tools/follow, js/bench/follow.mjs).
	{"follow.wasm/100KB", "rss-MB", "follow.native/100KB", "", note("(peak RSS)")},
	{"follow.wasm/1MB", "rss-MB", "follow.native/1MB", "", note("(make test holds it to 512 MB)")},
	{"follow.wasm/10MB", "rss-MB", "follow.native/10MB", "", atMost(256, "<=256 MB")},
	{"follow.wasm/10MB", "module-MB", "follow.wasm/1MB", "", note("(linear memory)")},
	{"follow.wasm/100KB", "cpu-s", "follow.native/100KB", "", ratioAtMost(3, "<=3x native")},
	{"follow.wasm/1MB", "cpu-s", "follow.native/1MB", "", ratioAtMost(3, "<=3x native")},
	{"follow.wasm/10MB", "cpu-s", "follow.native/10MB", "", ratioAtMost(3, "<=3x native")},
	{"follow.wasm/10MB", "deltas/s", "follow.native/10MB", "", note("(paced by the server)")},
	{"follow.node/1MB", "rss-MB", "follow.native/1MB", "", atMost(320, "<=320 MB (make test)")},
	{"follow.node/10MB", "rss-MB", "follow.native/10MB", "", note("(Node host)")},
	{"follow.node/10MB", "heap-MB", "follow.node/1MB", "", note("(JS heap)")},
	{"follow.node/10MB", "module-MB", "follow.wasm/10MB", "", note("(same module, V8)")},
	{"follow.node/10MB", "cpu-s", "follow.native/10MB", "", note("(Node host)")},
	{"bindings.StartWarmCache", "ns/op", "bindings.NewInstance", "", atMost(100e6, "<=100 ms")},
	{"bindings.NewInstance", "ns/op", "", "", atMost(10e6, "<=10 ms")},
	{"module.Size", "gzip-bytes", "module.Size", "raw-bytes", atMost(600e3, "<=600 KB gzip (#32)")},
	{"module.Size", "brotli-bytes", "module.Size", "raw-bytes", note("(reported)")},
	// The core in Node (V8). Baseline: decoding the same frame with the package's own msgpack decoder.
	{"js.apply_delta_1KB", "ns/op", "js.decode_frame_baseline", "", atMost(1500, "<=1.5 us")},
	{"js.apply_delta_10MB", "ns/op", "js.apply_delta_1KB", "", ratioAtMost(1.3, "<=1.3x of 1KB")},
	{"js.refresh_message_100KB", "ns/op", "js.apply_delta_1KB", "", note("(a whole re-read, for reference)")},
	// The Node host end to end, one delta per WebSocket message, beside the AI SDK's readUIMessageStream fed one chunk per pull.
	{"js.host_delta_10000", "ns/op", "js.ai_sdk_pulled_10000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_100000", "ns/op", "js.ai_sdk_pulled_100000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_1000000", "ns/op", "js.ai_sdk_pulled_1000000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_1000000", "ns/op", "js.host_delta_10000", "", ratioAtMost(1.5, "<=1.5x of 10,000")},
	{"js.host_delta_appended_10000", "ns/op", "js.ai_sdk_pulled_10000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_appended_1000000", "ns/op", "js.ai_sdk_pulled_1000000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.ai_sdk_queued_100000", "ns/op", "js.ai_sdk_pulled_100000", "", note("(AI SDK, chunks queued up front)")},
	{"js.host_delta_200msgs_10000", "ns/op", "js.host_delta_10000", "", note("(200 messages, delta to the middle)")},
	{"js.host_delta_appended_100000", "ns/op", "js.ai_sdk_pulled_100000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	// The same with 200 messages in the view and the delta going to one in the middle, without and with the 'change' listener.
	{"js.host_delta_200msgs_10000", "ns/op", "js.ai_sdk_pulled_10000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_200msgs_100000", "ns/op", "js.ai_sdk_pulled_100000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_200msgs_1000000", "ns/op", "js.ai_sdk_pulled_1000000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_200msgs_1000000", "ns/op", "js.host_delta_200msgs_10000", "", ratioAtMost(1.5, "<=1.5x of 10,000")},
	{"js.host_delta_200msgs_appended_10000", "ns/op", "js.ai_sdk_pulled_10000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_200msgs_appended_100000", "ns/op", "js.ai_sdk_pulled_100000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	{"js.host_delta_200msgs_appended_1000000", "ns/op", "js.ai_sdk_pulled_1000000", "", both(3000, 0.2, "<=3 us, >=5x faster")},
	// The Node host fed as a browser feeds a page (#32): each WebSocket message in its own
	// event-loop task, default scheduling, a 'change' listener reading the appended text;
	// beside the bare core fed the same way, and the AI SDK pulled one chunk per task.
	{"js.task_host_10000", "ns/op", "js.task_bare_core_10000", "", ratioAtMost(1.5, "<=1.5x the bare core")},
	{"js.task_host_100000", "ns/op", "js.task_bare_core_100000", "", ratioAtMost(1.5, "<=1.5x the bare core")},
	{"js.task_host_1000000", "ns/op", "js.task_bare_core_1000000", "", ratioAtMost(1.5, "<=1.5x the bare core")},
	{"js.task_host_10000", "ns/op", "js.task_ai_sdk_10000", "", ratioAtMost(0.1, ">=10x faster than the AI SDK")},
	{"js.task_host_100000", "ns/op", "js.task_ai_sdk_100000", "", ratioAtMost(0.1, ">=10x faster than the AI SDK")},
	{"js.task_host_1000000", "ns/op", "js.task_ai_sdk_1000000", "", ratioAtMost(0.1, ">=10x faster than the AI SDK")},
	{"js.task_empty_100000", "ns/op", "js.task_bare_core_100000", "", note("(the task turn alone, in every row above)")},
	// The same in headless Chromium (#32): the host loaded through the package's browser entry,
	// the module fetched and run by the page's V8, fed 100,000 deltas one task each (a
	// MessageChannel turn), beside the bare core and the AI SDK's readUIMessageStream in the
	// same page (js/bench/chromium.bench.js).
	{"js.chromium_host_100000", "ns/op", "js.chromium_bare_core_100000", "", ratioAtMost(1.5, "<=1.5x the bare core")},
	{"js.chromium_host_100000", "ns/op", "js.chromium_ai_sdk_100000", "", ratioAtMost(0.1, ">=10x faster than the AI SDK")},
	{"js.chromium_empty_100000", "ns/op", "js.chromium_bare_core_100000", "", note("(the page's task turn alone, in every row above)")},
	{"js.chromium_host_100000", "ns/op", "js.task_host_100000", "", note("(Chromium vs Node)")},
	// The same in the page's main-thread CPU time (DevTools' ThreadTime), steadier on a loaded machine.
	{"js.chromium_host_100000", "cpu-ns/op", "js.chromium_bare_core_100000", "", ratioAtMost(1.5, "<=1.5x the bare core")},
	{"js.chromium_host_100000", "cpu-ns/op", "js.chromium_ai_sdk_100000", "", ratioAtMost(0.1, ">=10x faster than the AI SDK")},
	{"js.chromium_empty_100000", "cpu-ns/op", "js.chromium_bare_core_100000", "", note("(the page's task turn alone)")},
	{"js.chromium_host_100000", "process-cpu-ns/op", "js.chromium_bare_core_100000", "", note("(the renderer's CPU time, every thread)")},
	// A fresh page's cold start, connect() to the first view, each part beside the whole.
	{"js.chromium_cold_start", "total_ms", "", "", note("(connect() to the first view, fresh page)")},
	{"js.chromium_cold_start", "fetch_ms", "js.chromium_cold_start", "total_ms", note("(to the module's last byte)")},
	{"js.chromium_cold_start", "compile_ms", "js.chromium_cold_start", "total_ms", note("(after the last byte)")},
	{"js.chromium_cold_start", "instantiate_ms", "js.chromium_cold_start", "total_ms", note("(WebAssembly.instantiate)")},
	{"js.chromium_cold_start", "first_view_ms", "js.chromium_cold_start", "total_ms", note("(Go runtime start, hello, page, onView)")},
	{"js.chromium_cold_start", "download_alone_ms", "js.chromium_cold_start", "fetch_ms", note("(the bytes fetched again after the first view)")},
	{"js.chromium_cold_start", "gzip-bytes", "js.chromium_cold_start", "raw-bytes", note("(the module fetched, gzip -9)")},
	// A fresh module's first 1 MB answer, after Session.warm beside cold (a new process each run).
	{"js.warm_first_answer_warmed", "longest_message_ms", "js.warm_first_answer_cold", "", note("(Session.warm: longest message)")},
	{"js.warm_first_answer_warmed", "total_ms", "js.warm_first_answer_cold", "", note("(Session.warm: whole answer)")},
	// The demo page in Chromium streaming a 1,000,000-character answer at the model's full speed.
	{"js.page_long_1000000", "longest_task_ms", "", "", atMost(50, "<=50 ms")},
	// A frame interval as requestAnimationFrame measures it cannot go below
	// the display's period (16.7 ms at 60 Hz): "under 16 ms" (#15) is read
	// as no dropped frame in the median, i.e. one frame.
	{"js.page_long_1000000", "median_frame_ms", "", "", atMost(16.7, "<=1 frame (16.7 ms at 60 Hz)")},
	// #32: the p95 frame under 33 ms, i.e. at most 95% of frames one
	// display period (two periods are 33.3 ms).
	{"js.page_long_1000000", "p95_frame_ms", "", "", atMost(33, "<33 ms (two frames are 33.3)")},
	// The local cache (#28) in Chromium: a reload of a 1,000-message session to its first
	// rendered message from IndexedDB beside the same reload from the network, and the
	// bytes a reload reads to catch up when nothing changed beside one page.
	{"js.reload_cached_1000", "first_message_ms", "js.reload_network_1000", "", both(50, 0.2, "<=50 ms, >=5x faster")},
	{"js.catchup_unchanged_1000", "bytes", "js.page_head_50", "", ratioAtMost(1, "<=one page")},
	{"js.history_1000", "bytes", "js.page_head_50", "", note("(the whole history)")},
	// Storage. A commit is compared with the cheapest statement on the same
	// SQLite (time per op both); the throughput target stands alone.
	{"server/store/sqlite.CommitCheckpoint", "commits/s", "", "", atLeast(10000, ">=10,000/s")},
	{"server/store/sqlite.CommitCheckpoint", "commits/cpu-s", "", "", note("(CPU time only)")},
	{"server/store/sqlite.CommitConcurrent", "commits/s", "server/store/sqlite.CommitCheckpoint", "", atLeast(10000, ">=10,000/s (16 sessions at once, group commit)")},
	{"server/store/sqlite.CommitCheckpoint", "ns/op", "server/store/sqlite.BaselineSelect1", "", note("(one commit vs SELECT 1)")},
	{"server/store/sqlite.DecodePart/hand", "ns/op", "server/store/sqlite.DecodePart/reflect", "", target{}},
	{"server/store/sqlite.MessagesPage50", "p50-µs", "server/store/sqlite.BaselinePage50DatabaseSQL", "", atMost(500, "p50 <=500 us")},
	{"server/store/sqlite.MessagesPage50", "p99-µs", "server/store/sqlite.BaselinePage50DatabaseSQL", "", atMost(5000, "p99 <=5 ms")},
	{"server/store/sqlite.MessagesPage50UnderWriter", "p99-µs", "server/store/sqlite.MessagesPage50", "", note("(under a writer)")},
	// The conversation tree (#25): a fork is one row whatever its prefix; a
	// page along a path 32 forks deep keeps the page targets.
	{"server/store/sqlite.Fork/100000", "p50-µs", "server/store/sqlite.Fork/10", "", ratioAtMost(1.5, "<=1.5x of a 10-message fork")},
	{"server/store/sqlite.MessagesPage50DeepPath", "p50-µs", "server/store/sqlite.MessagesPage50", "", atMost(500, "p50 <=500 us")},
	{"server/store/sqlite.MessagesPage50DeepPath", "p99-µs", "server/store/sqlite.MessagesPage50", "", atMost(5000, "p99 <=5 ms")},
	// Search (#30): one page of 20 hits over 100,000 messages, a mix of
	// common, rare, two-word, prefix and absent words, first and second
	// pages; PostgreSQL beside SQLite.
	{"server/store/sqlite.Search", "p50-µs", "", "", atMost(2000, "p50 <=2 ms")},
	{"server/store/sqlite.Search", "p99-µs", "", "", atMost(50000, "p99 <=50 ms")},
	{"server/store/postgres.Search", "p50-µs", "server/store/sqlite.Search", "", note("(PostgreSQL vs SQLite)")},
	{"server/store/postgres.Search", "p99-µs", "server/store/sqlite.Search", "", note("(PostgreSQL vs SQLite)")},
	// The same checkpoint commit on PostgreSQL (loopback TCP, fsync off)
	// beside SQLite's, and one commit beside one SELECT 1 round trip.
	{"server/store/postgres.CommitCheckpoint", "commits/s", "server/store/sqlite.CommitCheckpoint", "", note("(PostgreSQL vs SQLite)")},
	{"server/store/postgres.CommitCheckpoint", "ns/op", "server/store/postgres.BaselineSelect1", "", note("(one commit vs SELECT 1)")},
	{"server/store/postgres.CommitConcurrent", "commits/s", "server/store/postgres.CommitCheckpoint", "", atLeast(5000, ">=5,000/s (16 sessions at once, group commit)")},
	// Fan-out, in memory and over real WebSockets on loopback.
	{"server/internal/fanout.Fanout100", "deliveries/s", "server/internal/fanout.Fanout1", "", note("(hub only)")},
	{"server/internal/e2e.FanoutWebSocket100/subs=100", "deliveries/s", "server/internal/e2e.FanoutWebSocket100/subs=1", "", atLeast(1e6, ">=1,000,000/s")},
	{"server/internal/e2e.FanoutWebSocket100/subs=100/presence", "deliveries/s", "server/internal/e2e.FanoutWebSocket100/subs=100", "", note("(100 viewers with signals, presence churning every 50 ms)")},
	// What a live viewer costs the server: idle (resident memory of a syncserver process), and kept after a 256 KB answer (live heap in process).
	{"server/internal/e2e.ViewerMemory/idle", "KB/viewer", "", "", atMost(16, "<=16 KB")},
	{"server/internal/e2e.ViewerMemory/retained", "KB/viewer", "server/internal/e2e.ViewerMemory/retained", "idle-live-KB/viewer", ratioAtMost(1.5, "nothing answer-sized kept: <=1.5x of idle")},
	// Many live viewers on one node (#33 item 5): rows from manyViewersRows.
	{"server/internal/multinode.FanoutNodes/nodes=3", "deliveries/s", "server/internal/multinode.FanoutNodes/nodes=1", "", note("(100 subscribers over 3 nodes and NATS, beside 1 node)")},
	{"server/internal/e2e.MessagesHTTP/page50-msgpack", "ns/op", "server/internal/e2e.MessagesHTTP/healthz", "", target{}},
	{"server/internal/e2e.MessagesHTTP/page50-json", "ns/op", "server/internal/e2e.MessagesHTTP/page50-msgpack", "", target{}},
	{"server/internal/api.FrameEncoder/envelope", "ns/frame", "server/internal/api.FrameEncoder/reflection", "", target{}},
	{"server/internal/session.TurnDeltas", "deltas/s", "", "", note("(model to store, 1 subscriber)")},
	// Real providers: our adapter (parsed SSE chunk to engine event) beside
	// the SDK's own parse of the same bytes; the whole path, bytes to event.
	{"server/model/openai.OpenAIStream/adapter", "ns/token", "server/model/openai.OpenAIStream/sdk", "", atMost(2000, "<=2 us")},
	{"server/model/openai.OpenAIStream/provider", "ns/token", "server/model/openai.OpenAIStream/sdk", "", note("(SSE bytes to event)")},
	{"server/model/anthropic.AnthropicStream/adapter", "ns/token", "server/model/anthropic.AnthropicStream/sdk", "", atMost(2000, "<=2 us")},
	{"server/model/anthropic.AnthropicStream/provider", "ns/token", "server/model/anthropic.AnthropicStream/sdk", "", note("(SSE bytes to event)")},
	{"server/internal/session.ProviderTurnDeltas", "ns/token", "server/model/openai.OpenAIStream/sdk", "", note("(SSE bytes to published delta)")},
	// The composer's read for one step, with a summary, 100,000 messages vs 100.
	{"server/internal/session.ComposeWindow/messages=100000", "ns/op", "server/internal/session.ComposeWindow/messages=100", "", ratioAtMost(1.5, "<=1.5x of 100")},
	// Bounded memory: heap of one loaded session (after one exchange), and
	// bringing an evicted one back from the store vs using a loaded one.
	{"server/internal/session.LoadedSession/heap", "heap-bytes/session", "", "", note("(per loaded session)")},
	{"server/internal/session.LoadedSession/rss", "rss-bytes/session", "", "", note("(resident, per loaded session)")},
	{"server/internal/session.LoadedSession/reload", "ns/op", "server/internal/session.LoadedSession/hit", "", note("(evicted: loaded from the store)")},
}

// manyViewersRows are BenchmarkManyViewers's: N WebSocket viewers over S
// sessions of one syncserver, each session streaming a paced 20,000
// character answer at once, beside one viewer of one session; then a
// reconnect storm after a restart.
func manyViewersRows() []row {
	const pre = "server/internal/e2e.ManyViewers/"
	var out []row
	for _, n := range []int{1000, 5000, 10000} {
		for _, s := range []int{1, 10, 100} {
			b := fmt.Sprintf("%sviewers=%d/sessions=%d", pre, n, s)
			out = append(out,
				row{b, "answer-ms", pre + "viewers=1/sessions=1", "", ratioAtMost(1.5, "<=1.5x of one viewer")},
				row{b, "spread-p50-ms", "", "", note("(first to last viewer of a session, median)")},
				row{b, "spread-p99-ms", "", "", atMost(100, "first to last viewer: p99 <100 ms")},
				row{b, "resyncs", "", "", atMost(0, "0")},
				row{b, "server-cpu-ms", pre + "viewers=1/sessions=1", "", note("(the server's CPU for the answers)")},
				row{b, "msgs/viewer", pre + "viewers=1/sessions=1", "", note("(WebSocket messages per viewer: paced)")})
			if s == 10 {
				continue
			}
			// The same unpaced (-write-interval -1ns): every batch written at once.
			u := b + "/unpaced"
			out = append(out,
				row{u, "answer-ms", pre + "viewers=1/sessions=1", "", note("(unpaced)")},
				row{u, "spread-p99-ms", "", "", note("(unpaced)")},
				row{u, "server-cpu-ms", b, "", note("(unpaced beside paced)")},
				row{u, "msgs/viewer", b, "", note("(unpaced beside paced)")})
		}
	}
	for _, n := range []int{1000, 5000, 10000} {
		b := fmt.Sprintf("%sstorm/viewers=%d", pre, n)
		out = append(out,
			row{b, "live-ms", "", "", atMost(3000, "all live again <=3 s")},
			row{b, "refused", "", "", atMost(0, "0")},
			row{b, "listen-drops", "", "", note("(kernel listen queue overflows)")})
	}
	return out
}

func init() { rows = append(rows, manyViewersRows()...) }
