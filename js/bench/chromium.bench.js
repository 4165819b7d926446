// task.bench.js in headless Chromium (#32): the page-less host loaded in a
// page through the package's browser entry (/js/index.js, the module
// fetched from /js/agentsync.wasm and run by the page's V8), fed one delta
// per WebSocket message, each message in its own event-loop task (a
// MessageChannel turn), the default scheduling, a 'change' listener reading
// the appended text. Beside it, in the same page and fed the same way (the
// runs are task-runs.js's, the ones task.bench.js times in Node):
//   - chromium_bare_core_N: Core.handleCompact on the same frames (the
//     host is held to at most 1.5x of it);
//   - chromium_ai_sdk_N: the AI SDK's readUIMessageStream, loaded in the
//     page, one chunk pulled per task (the host >=10x faster);
//   - chromium_empty_N: the task alone (the turn and the message's bytes).
// Each is run alone (one page.evaluate), its wall time per delta as the
// page's clock reads it (ns_per_op), and per delta the CPU time of the
// page's main thread (cpu-ns_per_op) and of its renderer process
// (process-cpu-ns_per_op) as DevTools reads them around the run.
// Then the cold start (chromium_cold_start): connect() to the first view in
// a fresh page each run (a new browser context, the package imported
// already, the module served with no-store), in parts: fetch (to the
// module's last byte), compile (to WebAssembly's compile resolving),
// instantiate, first view (the Go runtime's start, the core, the stand-in
// socket's hello and page, the first onView); beside the module's size,
// raw and gzip -9 (as module.Size measures it; the loopback server sends
// it uncompressed). Where the fetch's time goes, also medians: when the
// request left (request_at_ms) and its first byte came (first_byte_at_ms)
// after connect(), and the same bytes fetched again in the page after the
// first view (download_alone_ms: the transfer without a compile reading the
// body, though V8's background tier-up may still run beside it).
//
// Prints one JSON object per line, like the other scripts:
//   {"name": "chromium_host_100000", "ns_per_op", "cpu-ns_per_op", "process-cpu-ns_per_op", "runs", "deltas", "applied"} ...
//   {"name": "chromium_cold_start", "fetch_ms", "compile_ms", "instantiate_ms", "first_view_ms", "total_ms", "request_at_ms", "first_byte_at_ms", "download_alone_ms", "runs", "raw-bytes", "gzip-bytes"}
//   node bench/chromium.bench.js [--deltas N] [--cold-runs N]
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../test/harness/browser.js';
import { startStaticServer } from '../test/harness/static-server.js';
import { chromiumPath, wasmPath } from '../test/paths.js';
import { median, medians } from './task-runs.js';

const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const DELTAS = arg('--deltas', 100_000);
const COLD_RUNS = arg('--cold-runs', 7);
const ROWS = ['host', 'bare', 'empty', 'ai'];
// No timer of a page that is not in front is throttled (headless pages are
// visible, but the flags keep it so whatever the build decides).
const ARGS = [...CHROMIUM_ARGS, '--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'];

// The whole script: a hung page must not hang `make bench`.
const deadline = setTimeout(() => {
  console.error('chromium.bench: timed out after 15 minutes');
  process.exit(1);
}, 15 * 60 * 1000);
deadline.unref();

// page.evaluate has no timeout of its own.
function within(ms, what, p) {
  let timer;
  return Promise.race([p, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
}

async function newPage(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  await page.goto(url);
  return { page, errors, close: () => context.close() };
}

const web = await startStaticServer();
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ARGS });
let failed = false;
try {
  const url = `${web.url}/js/bench/chromium.html`;
  const p = await newPage(browser, url);
  try {
    // The page's main thread's CPU time (DevTools' ThreadTime) and its
    // renderer's (ProcessTime: the collector's and IPC threads too), read
    // around each run: on a loaded machine the wall time counts the turns
    // the thread waited for a core, the CPU time does not.
    const cdp = await p.page.context().newCDPSession(p.page);
    await cdp.send('Performance.enable');
    const cpu = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const get = (name) => metrics.find((m) => m.name === name)?.value ?? NaN;
      return { thread: get('ThreadTime'), process: get('ProcessTime') };
    };
    await within(60_000, 'the page', p.page.evaluate(async () => {
      const { pageRuns } = await import('/js/bench/chromium-page.js');
      window.__runs = pageRuns();
    }));
    const run = async (k, name, n) => {
      const a = await cpu();
      const r = await within(300_000, name, p.page.evaluate(({ k, name, n }) => window.__runs[k](name, n), { k, name, n }));
      const b = await cpu();
      r['cpu-ns_per_op'] = Math.round(((b.thread - a.thread) * 1e9) / n);
      r['process-cpu-ns_per_op'] = Math.round(((b.process - a.process) * 1e9) / n);
      return r;
    };
    const label = { host: 'chromium_host', bare: 'chromium_bare_core', empty: 'chromium_empty', ai: 'chromium_ai_sdk' };
    // Every path is compiled before any is timed.
    for (const k of ROWS) await run(k, 'warmup', 20_000);
    for (const r of await medians(ROWS.map((k) => () => run(k, `${label[k]}_${DELTAS}`, DELTAS)), DELTAS)) {
      console.log(JSON.stringify(r));
      failed ||= !r.applied;
    }
  } catch (err) {
    throw new Error(`${err.message}\n${p.errors.join('\n')}`);
  } finally {
    await p.close();
  }

  const cold = [];
  // One page first, not counted: the browser's own first page (its
  // renderer and network processes starting) is no page's cold start.
  for (let r = 0; r < COLD_RUNS + 1; r++) {
    const c = await newPage(browser, url);
    try {
      const one = await within(60_000, 'the cold start', c.page.evaluate(async () => {
        await import('/js/index.js');
        const { coldStart } = await import('/js/bench/chromium-cold.js');
        return coldStart();
      }));
      if (r > 0) cold.push(one);
    } catch (err) {
      throw new Error(`${err.message}\n${c.errors.join('\n')}`);
    } finally {
      await c.close();
    }
  }
  const raw = await readFile(wasmPath);
  const out = { name: 'chromium_cold_start' };
  for (const k of ['fetch_ms', 'compile_ms', 'instantiate_ms', 'first_view_ms', 'total_ms', 'request_at_ms', 'first_byte_at_ms', 'download_alone_ms']) out[k] = median(cold.map((x) => x[k]));
  out.runs = cold.length;
  out['raw-bytes'] = raw.length;
  out['gzip-bytes'] = gzipSync(raw, { level: 9 }).length;
  out.streaming = cold.every((x) => x.streaming) ? 1 : 0;
  out.total_ms_each = cold.map((x) => x.total_ms);
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
  await web.close();
}
if (failed) {
  console.error('chromium.bench: a run did not end with the whole text; the figures are not meaningful');
  process.exitCode = 1;
}
