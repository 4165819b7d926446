// A Chromium trace of the demo page streaming a long answer at the model's
// full speed, summarised: the resyncs the page went through, the main
// thread's busy time per 250 ms, where the whole run and the stretch before
// the first resync spent their time, and every main-thread task longer than
// --min ms with its kinds of work and its functions (CPU samples). The page
// bench says how long the longest task is; this says why.
//   node bench/page.trace.js [--chars N] [--min MS] [--runs N] [--out trace.json]
// AGENTSYNC_DEMO_SERVER=path runs that server binary (harness.js).
import { writeFile } from 'node:fs/promises';
import { startDemo, settled, answerShown } from '../demo-test/harness.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const CHARS = Number(arg('--chars', 1_000_000));
const MIN_MS = Number(arg('--min', 30));
const RUNS = Number(arg('--runs', 1)); // answers streamed one after another, as the bench does
const OUT = arg('--out', '');

const CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'v8.execute',
  'disabled-by-default-v8.cpu_profiler',
].join(',');
// The trace events counted as kinds of work (nested ones overlap).
const KINDS = ['FunctionCall', 'FireAnimationFrame', 'TimerFire', 'Layout', 'UpdateLayoutTree', 'PrePaint', 'Paint', 'Layerize', 'Commit', 'HitTest', 'MinorGC', 'MajorGC'];

const demo = await startDemo({ speed: '0s' });
try {
  for (let run = 1; run <= RUNS; run++) {
    console.log(`--- run ${run}`);
    const { events, summary } = await traceOne();
    if (OUT) await writeFile(RUNS > 1 ? OUT.replace(/(\.json)?$/, `-${run}.json`) : OUT, JSON.stringify({ traceEvents: events }));
    console.log(JSON.stringify(summary));
    summarise(events);
  }
} finally {
  await demo.close();
}

// traceOne streams one answer in a new session under a trace; returns the
// trace events and what the page counted (statuses, render statistics).
async function traceOne() {
  const context = await demo.browser.newContext({ viewport: { width: 1200, height: 820 } });
  try {
    const page = await context.newPage();
    await page.goto(`${demo.url}/`);
    await page.getByTestId('new-session').click();
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    await page.evaluate(() => {
      window.__statuses = [];
      window.__agentsync.session.on('status', (e) => {
        window.__statuses.push([Math.round(performance.now()), e.status, e.reason]);
        console.timeStamp(`status ${e.status}`); // marks the trace
      });
    });
    const cdp = await context.newCDPSession(page);
    const events = [];
    cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    // Typed, and Playwright's script built in the page, before the trace
    // starts, as the bench does (page.bench.js).
    await page.getByTestId('input').fill(`scenario:long chars=${CHARS} delta=8`);
    await page.waitForFunction(() => true);
    await page.waitForFunction(() => document.documentElement.dataset.warm === 'done' && document.documentElement.dataset.coreWarm === 'done', null, { timeout: 30000 });
    await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
    // Starting the CPU profiler interrupts the page's next JavaScript for
    // 60-170 ms (V8.InvokeApiInterruptCallbacks): let that be this
    // evaluate's, not the Enter's keydown handler's. It is the trace's
    // first long task.
    await page.evaluate(() => 0);
    const t0 = Date.now();
    await page.keyboard.press('Enter'); // the input has the focus (fill)
    await page.waitForFunction(answerShown, CHARS, { timeout: 600000, polling: 500 });
    await page.waitForFunction(settled, null, { timeout: 60000 });
    const seconds = (Date.now() - t0) / 1000;
    await cdp.send('Tracing.end');
    await complete;
    const counted = await page.evaluate(() => ({ statuses: window.__statuses, stats: window.__agentsync.stats, list: window.__agentsync.list }));
    return { events, summary: { seconds, ...counted } };
  } finally {
    await context.close();
  }
}

// summarise prints what the renderer's main thread did.
function summarise(events) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' &&
    events.some((x) => x.pid === e.pid && x.name === 'FunctionCall'));
  if (!main) return console.log('no renderer main thread in the trace');
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  const samples = cpuSamples(events, main);
  const first = onMain.reduce((m, e) => Math.min(m, e.ts), Infinity);
  const at = (ts) => `${((ts - first) / 1000).toFixed(0)} ms`;

  const marks = events.filter((e) => e.pid === main.pid && e.name === 'TimeStamp');
  for (const e of marks) console.log(`mark at ${at(e.ts)}: ${e.args?.data?.message}`);
  const busy = [];
  for (const e of onMain) {
    if (e.name !== 'RunTask') continue;
    const bin = Math.floor((e.ts - first) / 250000);
    busy[bin] = (busy[bin] ?? 0) + e.dur / 1000;
  }
  console.log(`busy ms per 250 ms (does the page keep up?): ${Array.from(busy, (x) => Math.round(x ?? 0)).join(' ')}`);
  for (const e of onMain) {
    if (e.name === 'Layout' && e.dur > 20000) console.log(`layout at ${at(e.ts)}: ${(e.dur / 1000).toFixed(0)} ms ${JSON.stringify(e.args?.beginData)}`);
  }

  console.log(`whole run, kinds: ${top(kindsIn(onMain, -Infinity, Infinity), 12)}`);
  console.log(`whole run, self time: ${top(selfTime(samples, -Infinity, Infinity), 25)}`);
  const resync = marks.find((e) => e.args?.data?.message === 'status backoff')?.ts ?? Infinity;
  console.log(`until the first resync, self time: ${top(selfTime(samples, -Infinity, resync), 25)}`);
  console.log(`until the first resync, inclusive: ${top(inclusiveTime(samples, -Infinity, resync), 30)}`);

  for (const task of onMain.filter((e) => e.name === 'RunTask' && e.dur / 1000 >= MIN_MS)) {
    const end = task.ts + task.dur;
    console.log(`task at ${at(task.ts)}: ${(task.dur / 1000).toFixed(0)} ms`);
    console.log(`  kinds: ${top(kindsIn(onMain, task.ts, end), 8)}`);
    console.log(`  self time: ${top(selfTime(samples, task.ts, end), 10)}`);
    console.log(`  inclusive: ${top(inclusiveTime(samples, task.ts, end), 16)}`);
  }
}

// top formats the n largest entries of a map of milliseconds.
function top(m, n) {
  return [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
}

// kindsIn sums the main thread's events of each kind within [from, to].
function kindsIn(onMain, from, to) {
  const m = new Map();
  for (const e of onMain) {
    if (e.ts < from || e.ts + e.dur > to) continue;
    const k = e.name === 'EventDispatch' ? `EventDispatch(${e.args?.data?.type})` : e.name;
    if (KINDS.includes(e.name) || e.name === 'EventDispatch') m.set(k, (m.get(k) ?? 0) + e.dur / 1000);
  }
  return m;
}

// selfTime sums the samples in [from, to) by the function they were in.
function selfTime(samples, from, to) {
  const m = new Map();
  for (const s of samples) if (s.ts >= from && s.ts < to) m.set(s.fn, (m.get(s.fn) ?? 0) + s.dt / 1000);
  return m;
}

// inclusiveTime sums the samples in [from, to) by every function on their stack.
function inclusiveTime(samples, from, to) {
  const m = new Map();
  for (const s of samples) {
    if (s.ts < from || s.ts >= to) continue;
    for (const f of new Set(s.stack)) m.set(f, (m.get(f) ?? 0) + s.dt / 1000);
  }
  return m;
}

// cpuSamples turns the trace's ProfileChunk events of the main thread's
// process into {ts, dt, fn, stack} samples (fn: the sampled function and
// its script; stack: fn and its callers).
function cpuSamples(events, main) {
  const names = new Map();
  const parents = new Map();
  const stackOf = (id) => {
    const st = [];
    for (let n = id; n !== undefined; n = parents.get(n)) st.push(names.get(n));
    return st;
  };
  const out = [];
  let ts = 0;
  for (const e of events) {
    if (e.pid !== main.pid || (e.name !== 'Profile' && e.name !== 'ProfileChunk')) continue;
    if (e.name === 'Profile') {
      ts = e.args.data.startTime;
      continue;
    }
    const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) {
      const cf = n.callFrame;
      const file = (cf.url ?? '').split('/').pop();
      names.set(n.id, file ? `${cf.functionName || '(anon)'}@${file}:${cf.lineNumber + 1}` : cf.functionName || '(anon)');
      if (n.parent !== undefined) parents.set(n.id, n.parent);
    }
    const ids = d.cpuProfile?.samples ?? [];
    const deltas = d.timeDeltas ?? [];
    for (let i = 0; i < ids.length; i++) {
      ts += deltas[i] ?? 0;
      out.push({ ts, dt: deltas[i + 1] ?? 0, fn: names.get(ids[i]) ?? '?', stack: stackOf(ids[i]) });
    }
  }
  return out;
}
