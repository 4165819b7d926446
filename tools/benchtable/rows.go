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
	// The Go host's whole path per delta (frames in, changes out, view patched), one delta per flush.
	{"bindings.HostDelta/wasm/1KB", "ns/op", "bindings.HostDelta/native/1KB", "", "<=5 us"},
	{"bindings.HostDelta/wasm/10MB", "ns/op", "bindings.HostDelta/wasm/1KB", "", "<=1.5x of 1KB"},
	{"bindings.HostDelta/wasm/200msgs", "ns/op", "bindings.HostDelta/wasm/1KB", "", "(200 messages, delta to the middle)"},
	{"bindings.HostDelta/native/10MB", "ns/op", "bindings.HostDelta/native/1KB", "", "(native)"},
	// A Go program following a long answer from a real server (tools/follow, a process of its own).
	{"follow.wasm/100KB", "rss-MB", "follow.native/100KB", "", "(peak RSS)"},
	{"follow.wasm/1MB", "rss-MB", "follow.native/1MB", "", "<=160 MB (make test)"},
	{"follow.wasm/10MB", "rss-MB", "follow.native/10MB", "", "<=256 MB"},
	{"follow.wasm/10MB", "module-MB", "follow.wasm/1MB", "", "(linear memory)"},
	{"follow.wasm/100KB", "cpu-s", "follow.native/100KB", "", "<=3x native"},
	{"follow.wasm/1MB", "cpu-s", "follow.native/1MB", "", "<=3x native"},
	{"follow.wasm/10MB", "cpu-s", "follow.native/10MB", "", "<=3x native"},
	{"follow.wasm/10MB", "deltas/s", "follow.native/10MB", "", "(paced by the server)"},
	{"follow.node/1MB", "rss-MB", "follow.native/1MB", "", "<=320 MB (make test)"},
	{"follow.node/10MB", "rss-MB", "follow.native/10MB", "", "(Node host)"},
	{"follow.node/10MB", "heap-MB", "follow.node/1MB", "", "(JS heap)"},
	{"follow.node/10MB", "module-MB", "follow.wasm/10MB", "", "(same module, V8)"},
	{"follow.node/10MB", "cpu-s", "follow.native/10MB", "", "(Node host)"},
	{"bindings.StartWarmCache", "ns/op", "bindings.NewInstance", "", "<=100 ms"},
	{"bindings.NewInstance", "ns/op", "bindings.ApplyDelta/native/1KB", "", "<=10 ms"},
	{"module.Size", "gzip-bytes", "module.Size", "raw-bytes", "<=1.0 MB gzip"},
	{"module.Size", "brotli-bytes", "module.Size", "raw-bytes", "(reported)"},
	// The core in Node (V8). Baseline: decoding the same frame with the package's own msgpack decoder.
	{"js.apply_delta_1KB", "ns/op", "js.decode_frame_baseline", "", "<=1.5 us"},
	{"js.apply_delta_10MB", "ns/op", "js.apply_delta_1KB", "", "<=1.3x of 1KB"},
	{"js.refresh_message_100KB", "ns/op", "js.apply_delta_1KB", "", "(a whole re-read, for reference)"},
	// The Node host end to end, one delta per WebSocket message, beside the AI SDK's readUIMessageStream.
	{"js.host_delta_10000", "ns/op", "js.ai_sdk_pulled_10000", "", "<=3 us, >=5x faster"},
	{"js.host_delta_100000", "ns/op", "js.ai_sdk_pulled_100000", "", "<=3 us, >=5x faster"},
	{"js.host_delta_1000000", "ns/op", "js.ai_sdk_pulled_1000000", "", "<=3 us, >=5x faster"},
	{"js.host_delta_1000000", "ns/op", "js.host_delta_10000", "", "<=1.5x of 10,000"},
	{"js.host_delta_appended_10000", "ns/op", "js.ai_sdk_pulled_10000", "", "<=3 us, >=5x faster"},
	{"js.host_delta_appended_1000000", "ns/op", "js.ai_sdk_pulled_1000000", "", "<=3 us, >=5x faster"},
	{"js.ai_sdk_queued_100000", "ns/op", "js.ai_sdk_pulled_100000", "", "(AI SDK, chunks queued up front)"},
	{"js.host_delta_200msgs_10000", "ns/op", "js.host_delta_10000", "", "(200 messages, delta to the middle)"},
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
}
