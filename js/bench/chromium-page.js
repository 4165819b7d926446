// The page side of bench/chromium.bench.js, imported in Chromium from
// /js/bench/ (bench/chromium.html maps the bare imports): the runs of
// task-runs.js on the package's browser entry and the module fetched from
// /js/agentsync.wasm, beside the AI SDK loaded in the same page; and the
// cold start, connect() to the first view, in parts.

import { COMPACT, connect, Core } from '/js/index.js';
import { readUIMessageStream } from 'ai';
import { taskRuns } from './task-runs.js';

const WASM = '/js/agentsync.wasm';

// performance.now() in ms, to ns: coarsened to 100 µs in a page that is not
// cross-origin isolated, which is 1 ns per delta over 100,000.
const now = () => performance.now() * 1e6;

/**
 * Every row once at 20,000 deltas (compiled before any is timed), then each
 * at n deltas runsFor(n) times, interleaved; resolves with their medians.
 */
export async function tasks(n, rows) {
  const runs = taskRuns({ connect, Core, COMPACT, wasm: WASM, readUIMessageStream, now });
  const label = { host: 'chromium_host', bare: 'chromium_bare_core', empty: 'chromium_empty', ai: 'chromium_ai_sdk' };
  for (const k of rows) await runs[k]('warmup', 20_000);
  return runs.medians(rows.map((k) => () => runs[k](`${label[k]}_${n}`, n)), n);
}
