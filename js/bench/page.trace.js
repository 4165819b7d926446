// A Chromium trace of the demo page streaming a long answer at the model's
// full speed, summarised: every main-thread task longer than --min ms with
// what it spent its time on (script by function, style, layout, paint), and
// the server's resyncs seen by the page. The page bench says how long the
// longest task is; this says why.
//   node bench/page.trace.js [--chars N] [--min MS] [--runs N] [--out trace.json]
import { writeFile } from 'node:fs/promises';
import { startDemo, settled, answerShown } from '../demo-test/harness.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const CHARS = Number(arg('--chars', 1_000_000));
const MIN_MS = Number(arg('--min', 30));
const OUT = arg('--out', '');

const CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'v8.execute',
  'disabled-by-default-v8.cpu_profiler',
].join(',');

const RUNS = Number(arg('--runs', 1)); // answers streamed one after another, as the bench does; each traced

const demo = await startDemo({ speed: '0s' });
try {
  for (let run = 1; run <= RUNS; run++) {
  console.log(`--- run ${run}`);
  const context = await demo.browser.newContext({ viewport: { width: 1200, height: 820 } });
  const page = await context.newPage();
  const statuses = [];
  page.on('console', (m) => statuses.push(`${m.type()}: ${m.text()}`));
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
  const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
  const t0 = Date.now();
  await page.getByTestId('input').fill(`scenario:long chars=${CHARS} delta=8`);
  await page.getByTestId('input').press('Enter');
  await page.waitForFunction(answerShown, CHARS, { timeout: 600000, polling: 500 });
  await page.waitForFunction(settled, null, { timeout: 60000 });
  const seconds = (Date.now() - t0) / 1000;
  await cdp.send('Tracing.end');
  await done;
  const pageStats = await page.evaluate(() => ({ statuses: window.__statuses, stats: window.__agentsync.stats, list: window.__agentsync.list }));
  if (OUT) await writeFile(OUT, JSON.stringify({ traceEvents: events }));
  console.log(JSON.stringify({ seconds, ...pageStats }));
  summarise(events);
  await context.close();
  }
} finally {
  await demo.close();
}

// summarise prints the renderer main thread's long tasks and, per task, the
// time by kind of work and the script's heaviest functions (CPU samples).
function summarise(events) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' &&
    events.some((x) => x.pid === e.pid && x.name === 'FunctionCall'));
  if (!main) return console.log('no renderer main thread in the trace');
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  const tasks = onMain.filter((e) => e.name === 'RunTask' && e.dur / 1000 >= MIN_MS).sort((a, b) => a.ts - b.ts);
  const samples = cpuSamples(events, main);
  const first = onMain.reduce((m, e) => Math.min(m, e.ts), Infinity);
  for (const e of events) {
    if (e.pid === main.pid && e.name === 'TimeStamp') console.log(`mark at ${((e.ts - first) / 1000).toFixed(0)} ms: ${e.args?.data?.message}`);
  }
  // Main-thread busy time per 250 ms, to see whether the page keeps up.
  const busy = [];
  for (const e of onMain) {
    if (e.name !== 'RunTask') continue;
    const b = Math.floor((e.ts - first) / 250000);
    busy[b] = (busy[b] ?? 0) + e.dur / 1000;
  }
  console.log(`busy ms per 250 ms: ${[...busy].map((x) => Math.round(x ?? 0)).join(' ')}`);
  // The whole run: self time by function and the kinds of work.
  const all = new Map();
  for (const s of samples) all.set(s.fn, (all.get(s.fn) ?? 0) + s.dt / 1000);
  const kindsAll = new Map();
  for (const e of onMain) {
    if (!['FunctionCall', 'Layout', 'UpdateLayoutTree', 'Paint', 'PrePaint', 'Layerize', 'FireAnimationFrame', 'MinorGC', 'MajorGC', 'TimerFire', 'HitTest', 'Commit', 'ParseHTML'].includes(e.name)) continue;
    kindsAll.set(e.name, (kindsAll.get(e.name) ?? 0) + e.dur / 1000);
  }
  const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
  for (const e of onMain) {
    if (e.name === 'Layout' && e.dur > 20000) console.log(`layout at ${((e.ts - first) / 1000).toFixed(0)} ms: ${(e.dur / 1000).toFixed(0)} ms ${JSON.stringify(e.args?.beginData)} ${JSON.stringify(e.args?.endData?.layoutRoots?.length ?? e.args?.endData)}`.slice(0, 400));
  }
  console.log(`whole run, kinds: ${top(kindsAll, 12)}`);
  console.log(`whole run, self time: ${top(all, 25)}`);
  // Until the first resync (or the end): what streaming costs.
  const resync = events.find((e) => e.pid === main.pid && e.name === 'TimeStamp' && e.args?.data?.message === 'status backoff')?.ts ?? Infinity;
  const before = new Map();
  const beforeIncl = new Map();
  for (const s of samples) {
    if (s.ts >= resync) continue;
    before.set(s.fn, (before.get(s.fn) ?? 0) + s.dt / 1000);
    for (const f of new Set(s.stack)) beforeIncl.set(f, (beforeIncl.get(f) ?? 0) + s.dt / 1000);
  }
  console.log(`until the first resync, self time: ${top(before, 25)}`);
  console.log(`until the first resync, inclusive: ${top(beforeIncl, 30)}`);
  for (const task of tasks) {
    const end = task.ts + task.dur;
    const kinds = new Map();
    for (const e of onMain) {
      if (e === task || e.ts < task.ts || e.ts + e.dur > end) continue;
      if (!['FunctionCall', 'EventDispatch', 'Layout', 'UpdateLayoutTree', 'Paint', 'PrePaint', 'Layerize', 'FireAnimationFrame', 'v8.callFunction', 'GCEvent', 'MinorGC', 'MajorGC', 'ParseHTML', 'TimerFire', 'HitTest'].includes(e.name)) continue;
      const k = e.name === 'EventDispatch' ? `EventDispatch(${e.args?.data?.type})` : e.name;
      kinds.set(k, (kinds.get(k) ?? 0) + e.dur / 1000);
    }
    const fns = new Map();
    const incl = new Map();
    for (const s of samples) {
      if (s.ts < task.ts || s.ts > end) continue;
      fns.set(s.fn, (fns.get(s.fn) ?? 0) + s.dt / 1000);
      for (const f of new Set(s.stack)) incl.set(f, (incl.get(f) ?? 0) + s.dt / 1000);
    }
    const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
    console.log(`task at ${((task.ts - first) / 1000).toFixed(0)} ms: ${(task.dur / 1000).toFixed(0)} ms`);
    console.log(`  kinds (nested, overlapping): ${top(kinds, 8)}`);
    console.log(`  self time by function: ${top(fns, 10)}`);
    console.log(`  inclusive: ${top(incl, 16)}`);
  }
}

// cpuSamples turns the trace's ProfileChunk events of the main thread into
// {ts, dt, fn} samples (fn: the sampled frame's function and script).
function cpuSamples(events, main) {
  const nodes = new Map();
  const parents = new Map();
  const out = [];
  const stackOf = (id) => {
    const st = [];
    for (let n = id; n !== undefined; n = parents.get(n)) st.push(nodes.get(n));
    return st;
  };
  let ts = 0;
  for (const e of events) {
    if (e.pid !== main.pid || e.name !== 'Profile' && e.name !== 'ProfileChunk') continue;
    if (e.name === 'Profile') { ts = e.args.data.startTime; continue; }
    const d = e.args.data;
    for (const n of d.cpuProfile?.nodes ?? []) {
      const cf = n.callFrame;
      const file = (cf.url ?? '').split('/').pop();
      nodes.set(n.id, `${cf.functionName || '(anon)'}@${file}:${cf.lineNumber + 1}`.replace(/@:0$/, ''));
      if (n.parent !== undefined) parents.set(n.id, n.parent);
    }
    const ids = d.cpuProfile?.samples ?? [];
    const deltas = d.timeDeltas ?? [];
    for (let i = 0; i < ids.length; i++) {
      ts += deltas[i] ?? 0;
      out.push({ ts, dt: deltas[i + 1] ?? 0, fn: nodes.get(ids[i]) ?? '?', stack: stackOf(ids[i]) });
    }
  }
  return out;
}
