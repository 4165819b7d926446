// One delta per WebSocket message, fed to the Node host as a browser feeds
// a page: each message in its own event-loop task (a MessageChannel turn,
// not a synchronous loop), the default scheduling (listeners in a
// microtask after the message's task), and a 'change' listener that reads
// the appended text (what a renderer appends to the DOM). At 10,000,
// 100,000 and 1,000,000 deltas of 8 bytes.
//
// Beside it, in the same run and fed the same way (one task per message,
// the message's bytes made in that task):
//   - task_bare_core_N: the bare core, Core.handleCompact on the same
//     frame and the appended text read from its answer: the floor the host
//     is held to (at most 1.5x);
//   - task_ai_sdk_N: the AI SDK's readUIMessageStream, each chunk pulled
//     in a task of its own, the consumer reading the message's text
//     (at least 10x slower than the host);
//   - task_empty_N: a task that only makes the message's bytes: what the
//     turn itself costs, in every figure above.
//
// The socket and fetch are in-process stand-ins: the figure is the host's
// own cost, not the network's. Prints one JSON object per line.
//   node bench/task.bench.js [--max N]

import { fileURLToPath } from 'node:url';
import { readUIMessageStream } from 'ai';
import { COMPACT, connect, Core } from '../node.js';
import { taskRuns } from './task-runs.js';

const wasm = process.env.AGENTSYNC_WASM ?? fileURLToPath(new URL('../../wasm/module/agentsync.wasm', import.meta.url));
const maxArg = process.argv.indexOf('--max');
const MAX = maxArg > 0 ? Number(process.argv[maxArg + 1]) : 1_000_000;
const rowsArg = process.argv.indexOf('--rows'); // e.g. --rows host,bare (profiling)
const ROWS = rowsArg > 0 ? process.argv[rowsArg + 1].split(',') : ['host', 'bare', 'empty', 'ai'];

// The frames, the stand-ins and the runs are task-runs.js's, shared with
// chromium.bench.js (the same runs in a Chromium page).
const base = process.hrtime.bigint();
const { medians, ...all } = taskRuns({ connect, Core, COMPACT, wasm, readUIMessageStream, now: () => Number(process.hrtime.bigint() - base) });

const sizes = [10_000, 100_000, 1_000_000].filter((n) => n <= MAX);
const label = { host: 'task_host', bare: 'task_bare_core', empty: 'task_empty', ai: 'task_ai_sdk' };
// Every path is compiled before any is timed.
for (const k of ROWS) await all[k]('warmup', 20_000);
let failed = false;
for (const n of sizes) {
  const fns = ROWS.map((k) => () => all[k](`${label[k]}_${n}`, n));
  for (const r of await medians(fns, n)) {
    console.log(JSON.stringify(r));
    failed ||= !r.applied;
  }
}
if (failed) {
  console.error('bench: a run did not end with the whole text; the figures are not meaningful');
  process.exitCode = 1;
}
