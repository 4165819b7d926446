// The page side of bench/chromium.bench.js, imported in Chromium from
// /js/bench/ (bench/chromium.html maps the bare imports): the runs of
// task-runs.js on the package's browser entry and the module fetched from
// /js/agentsync.wasm, beside the AI SDK loaded in the same page.

import { COMPACT, connect, Core } from '/js/index.js';
import { readUIMessageStream } from 'ai';
import { taskRuns } from './task-runs.js';

const WASM = '/js/agentsync.wasm';

// performance.now() in ms, to ns: coarsened to 100 µs in a page that is not
// cross-origin isolated, which is 1 ns per delta over 100,000.
const now = () => performance.now() * 1e6;

/**
 * The runs of task-runs.js on the browser entry, keyed host, bare, empty,
 * ai: chromium.bench.js calls one at a time (page.evaluate), reading the
 * main thread's CPU time around each (DevTools' Performance.getMetrics).
 */
export function pageRuns() {
  return taskRuns({ connect, Core, COMPACT, wasm: WASM, readUIMessageStream, now });
}
