package main

// row is one line of the table: a figure, the same-run baseline it is
// compared against, and the target the issues set for it.
type row struct {
	Bench    string // "<pkg>.<BenchmarkName without Benchmark>[/sub]"
	Metric   string // the reported unit to show, e.g. "ns/op"
	Baseline string
	BMetric  string // unit of the baseline; empty = Metric
	Target   string
}

func (r row) BaselineMetric() string {
	if r.BMetric != "" {
		return r.BMetric
	}
	return r.Metric
}

// rows lists every benchmark of the repository with its baseline.
var rows = []row{
	// The core, natively. Baseline: decoding the same frame with msgpack/v5's reflection.
	{"synccore.ApplyDelta/Handle/1KB", "ns/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", "<=250 ns, <=1 alloc"},
	{"synccore.ApplyDelta/Handle/10240KB", "ns/op", "synccore.ApplyDelta/Handle/1KB", "", "<=1.3x of 1KB"},
	{"synccore.ApplyDelta/HandleBytes/1KB", "ns/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", "<=250 ns"},
	{"synccore.ApplyDelta/HandleBytes/10240KB", "ns/op", "synccore.ApplyDelta/HandleBytes/1KB", "", "<=1.3x of 1KB"},
	{"synccore.ApplyDelta/Handle/1KB", "allocs/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", "<=1"},
	{"synccore.ApplyDelta/AppendHandleBytes/1KB", "ns/op", "synccore.ApplyDelta/BaselineGenericDecodeFrames", "", "(bytes in, 0 allocs)"},
	{"synccore.ApplyDelta/AppendHandleBytes/10240KB", "ns/op", "synccore.ApplyDelta/AppendHandleBytes/1KB", "", "<=1.3x of 1KB"},
	{"synccore.SnapshotPage200", "ns/op", "synccore.SnapshotPage200Generic", "", "<=1 ms"},
	{"synccore.DecodePart", "ns/op", "server/store.DecodePart/reflect", "", "(stored part bodies)"},
	{"synccore.AppendFrames", "ns/frame", "server/api.FrameEncoder/reflection", "", "(64-frame batch)"},
	// The core under wazero, beside the native core in the same run.
	{"bindings.ApplyDelta/wasm/1KB", "ns/op", "bindings.ApplyDelta/native/1KB", "", "<=3 us"},
	{"bindings.ApplyDelta/wasm/10MB", "ns/op", "bindings.ApplyDelta/wasm/1KB", "", "<=1.3x of 1KB"},
	{"bindings.ApplyDelta/native/10MB", "ns/op", "bindings.ApplyDelta/native/1KB", "", "(native, through Core)"},
	{"bindings.StartWarmCache", "ns/op", "bindings.NewInstance", "", "<=100 ms"},
	{"bindings.NewInstance", "ns/op", "bindings.ApplyDelta/native/1KB", "", "<=10 ms"},
	{"module.Size", "gzip-bytes", "module.Size", "raw-bytes", "<=1.0 MB gzip"},
	{"module.Size", "brotli-bytes", "module.Size", "raw-bytes", "(reported)"},
	// The core in Node (V8). Baseline: decoding the same frame with the package's own msgpack decoder.
	{"js.apply_delta_1KB", "ns/op", "js.decode_frame_baseline", "", "<=1.5 us"},
	{"js.apply_delta_10MB", "ns/op", "js.apply_delta_1KB", "", "<=1.3x of 1KB"},
	{"js.refresh_message_100KB", "ns/op", "js.apply_delta_1KB", "", "(per view flush)"},
	// Storage.
	{"server/store.CommitCheckpoint", "commits/s", "server/store.BaselineSelect1", "ns/op", ">=10,000/s"},
	{"server/store.CommitCheckpoint", "commits/cpu-s", "server/store.BaselineSelect1", "ns/op", "(CPU time only)"},
	{"server/store.DecodePart/hand", "ns/op", "server/store.DecodePart/reflect", "", ""},
	{"server/store.MessagesPage50", "p50-µs", "server/store.BaselinePage50DatabaseSQL", "", "p50 <=500 us"},
	{"server/store.MessagesPage50", "p99-µs", "server/store.BaselinePage50DatabaseSQL", "", "p99 <=5 ms"},
	{"server/store.MessagesPage50UnderWriter", "p99-µs", "server/store.MessagesPage50", "", "(under a writer)"},
	// Fan-out, in memory and over real WebSockets on loopback.
	{"server/fanout.Fanout100", "deliveries/s", "server/fanout.Fanout1", "", "(hub only)"},
	{"server/e2e.FanoutWebSocket100/subs=100", "deliveries/s", "server/e2e.FanoutWebSocket100/subs=1", "", ">=1,000,000/s"},
	{"server/e2e.MessagesHTTP/page50-msgpack", "ns/op", "server/e2e.MessagesHTTP/healthz", "", ""},
	{"server/e2e.MessagesHTTP/page50-json", "ns/op", "server/e2e.MessagesHTTP/page50-msgpack", "", ""},
	{"server/api.FrameEncoder/envelope", "ns/frame", "server/api.FrameEncoder/reflection", "", ""},
	{"server/session.TurnDeltas", "deltas/s", "server/fanout.Fanout1", "deliveries/s", "(model to store, 1 subscriber)"},
	// Real providers: our adapter (parsed SSE chunk to engine event) beside
	// the SDK's own parse of the same bytes; the whole path, bytes to event.
	{"server/model.OpenAIStream/adapter", "ns/token", "server/model.OpenAIStream/sdk", "", "<=2 us"},
	{"server/model.OpenAIStream/provider", "ns/token", "server/model.OpenAIStream/sdk", "", "(SSE bytes to event)"},
	{"server/model.AnthropicStream/adapter", "ns/token", "server/model.AnthropicStream/sdk", "", "<=2 us"},
	{"server/model.AnthropicStream/provider", "ns/token", "server/model.AnthropicStream/sdk", "", "(SSE bytes to event)"},
	{"server/session.ProviderTurnDeltas", "ns/token", "server/model.OpenAIStream/sdk", "", "(SSE bytes to published delta)"},
	// The composer's read for one step, with a summary, 100,000 messages vs 100.
	{"server/session.ComposeWindow/messages=100000", "ns/op", "server/session.ComposeWindow/messages=100", "", "<=1.5x of 100"},
}
