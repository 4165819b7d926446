// The demo page in headless Chromium streaming a 1,000,000-character answer
// at the scripted model's full speed (about one delta per WebSocket message
// when the page keeps up): the longest main-thread task (long-task observer)
// and the frame intervals (requestAnimationFrame) while it streams. The page
// appends streamed text to the DOM from the host's change events; the
// figure of a page that re-rendered the message per delta grows with it.
// Prints one JSON line: {"name", "longest_task_ms", "median_frame_ms", ...}.
//   node bench/page.bench.js [--chars N]
import { startDemo, settled, answerShown } from '../demo-test/harness.js';

const charsArg = process.argv.indexOf('--chars');
const CHARS = charsArg > 0 ? Number(process.argv[charsArg + 1]) : 1_000_000;

const RUNS = 3; // each figure is the median of RUNS answers streamed in fresh sessions
const demo = await startDemo({ speed: '0s' });
try {
  const runs = [];
  for (let r = 0; r < RUNS; r++) runs.push(await streamOnce());
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const out = { name: `page_long_${CHARS}`, runs: RUNS };
  for (const k of ['seconds', 'longest_task_ms', 'long_tasks', 'median_frame_ms', 'p95_frame_ms', 'frames']) out[k] = median(runs.map((x) => x[k]));
  out.longest_task_ms_each = runs.map((x) => x.longest_task_ms);
  out.task_at_ms = runs.map((x) => x.task_at_ms);
  console.log(JSON.stringify(out));
} finally {
  await demo.close();
}

// streamOnce streams one answer in a new session and returns its figures.
async function streamOnce() {
  const context = await demo.browser.newContext({ viewport: { width: 1200, height: 820 } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    window.__perf = { tasks: [], frames: [], on: false };
    new PerformanceObserver((list) => {
      if (window.__perf.on) for (const e of list.getEntries()) { window.__perf.tasks.push(e.duration); (window.__perf.at ??= []).push([Math.round(e.startTime - window.__perf.t0), Math.round(e.duration)]); }
    }).observe({ type: 'longtask', buffered: false });
    let last = 0;
    const frame = (t) => {
      if (window.__perf.on && last) window.__perf.frames.push(t - last);
      last = t;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
  await page.goto(`${demo.url}/`);
  await page.getByTestId('new-session').click();
  await page.locator('[data-testid="status"][data-status="live"]').waitFor();
  // Typed before the observers start (typing is not what this measures),
  // and Playwright's own script built in the page before too: the first
  // waitForFunction builds it, a 40-50 ms task of Playwright's that fell
  // among the answer's tasks. The Enter is pressed on the keyboard, not
  // through a locator (whose action runs that script in the page). The
  // Enter's keydown, its submit, and everything after are measured.
  await page.getByTestId('input').fill(`scenario:long chars=${CHARS} delta=8`);
  await page.waitForFunction(() => true);
  // The markdown renderer and the sync core warm up while the page is
  // idle after loading (markdown.js, app.js): not the answer's time either.
  await page.waitForFunction(() => document.documentElement.dataset.warm === 'done' && document.documentElement.dataset.coreWarm === 'done', null, { timeout: 30000 });
  await page.evaluate(() => { window.__perf.on = true; window.__perf.t0 = performance.now(); });
  const t0 = Date.now();
  await page.keyboard.press('Enter'); // the input has the focus (fill)
  await page.waitForFunction(answerShown, CHARS, { timeout: 600000, polling: 500 });
  await page.waitForFunction(settled, null, { timeout: 60000 });
  const seconds = (Date.now() - t0) / 1000;
  const perf = await page.evaluate(() => { window.__perf.on = false; return window.__perf; });
  const frames = perf.frames.sort((a, b) => a - b);
  const q = (p) => (frames.length ? frames[Math.min(frames.length - 1, Math.floor(p * frames.length))] : 0);
  await context.close();
  return {
    seconds, longest_task_ms: Math.round(Math.max(0, ...perf.tasks)), long_tasks: perf.tasks.length, task_at_ms: perf.at ?? [],
    median_frame_ms: Math.round(q(0.5) * 10) / 10, p95_frame_ms: Math.round(q(0.95) * 10) / 10, frames: frames.length,
  };
}
