// The local cache in headless Chromium against the real server (protocol
// §6.9): a reload of a 1,000-message session, from connect() to the first
// rendered message (the package imported already, as an app's bundle is),
// from the IndexedDB cache beside the same reload from the network; and the
// bytes read from the server to catch up after a reload when nothing
// changed, beside one page of the same session. Prints JSON lines:
//   {"name": "reload_cached_1000", "first_message_ms", "runs"}
//   {"name": "reload_network_1000", "first_message_ms", "runs"}
//   {"name": "catchup_unchanged_1000", "bytes"}  {"name": "page_head_50", "bytes"}
//   {"name": "history_1000", "bytes"} (every page of the history, for scale)
//   node bench/cache.bench.js [--turns N]
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../test/harness/browser.js';
import { serve } from '../test/harness/restartable.js';
import { startStaticServer } from '../test/harness/static-server.js';
import { chromiumPath } from '../test/paths.js';

const turnsArg = process.argv.indexOf('--turns');
const TURNS = turnsArg > 0 ? Number(process.argv[turnsArg + 1]) : 500;
const N = TURNS * 2;
const RUNS = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const dir = await mkdtemp(path.join(os.tmpdir(), 'agentsync-cache-bench-'));
const srv = await serve(path.join(dir, 'bench.db'));
const web = await startStaticServer({ backend: srv.addr });
const browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage();
  await page.goto(`${web.url}/js/test/cache.html`);
  // The history, written from the page (a session without cache), then
  // loaded whole once into the cache.
  const made = await page.evaluate(async ({ turns }) => {
    const { createSession } = await import('/js/index.js');
    const s = await createSession(location.origin, { wasm: '/js/agentsync.wasm' });
    for (let i = 0; i < turns; i++) {
      const user = await s.send(`turn ${i}: ${'words of a message '.repeat(4)}`);
      await s.waitFor((v) => v.messages.some((m) => m.role === 'agent' && m.sequence > user.sequence && m.state === 'done'));
    }
    s.close();
    const { open, until } = await import('/js/test/cache-page.js');
    const { session } = await open({ sessionId: s.sessionId, pageLimit: 50 });
    await until(() => session.status === 'live');
    while (session.view.has_more_older) await session.loadOlder();
    await session.cache.flush();
    let bytes = 0;
    for (let before = 0; ;) {
      const res = await fetch(`/v1/sessions/${s.sessionId}/messages?limit=50${before ? `&before_sequence=${before}` : ''}`, { headers: { Accept: 'application/msgpack' } });
      const buf = await res.arrayBuffer();
      bytes += buf.byteLength;
      const { decode } = await import('/js/index.js');
      const p = decode(new Uint8Array(buf));
      if (!p.has_more) break;
      before = p.next_before_sequence;
    }
    const head = await fetch(`/v1/sessions/${s.sessionId}/messages?limit=50`, { headers: { Accept: 'application/msgpack' } });
    return { sessionId: s.sessionId, count: session.view.messages.length, history: bytes, page: (await head.arrayBuffer()).byteLength };
  }, { turns: TURNS });
  if (made.count !== N) throw new Error(`the cache holds ${made.count} messages, not ${N}`);

  const reload = async (cache) => {
    await page.reload();
    return page.evaluate(async ({ sessionId, cache }) => {
      const { open, until } = await import('/js/test/cache-page.js');
      const { session, firstMs, cached } = await open({ sessionId, pageLimit: 50, cache });
      await until(() => session.status === 'live');
      const out = { firstMs, cached, bytes: session.cache?.catchUpBytes ?? 0, count: session.view.messages.length };
      session.close();
      return out;
    }, { sessionId: made.sessionId, cache });
  };
  const cached = [];
  const network = [];
  let bytes = 0;
  for (let r = 0; r < RUNS; r++) {
    const c = await reload(true);
    if (!c.cached || c.count !== N) throw new Error(`the cached reload showed ${JSON.stringify(c)}`);
    cached.push(c.firstMs);
    bytes = c.bytes;
    const n = await reload(false);
    network.push(n.firstMs);
  }
  const round = (x) => Math.round(x * 10) / 10;
  console.log(JSON.stringify({ name: `reload_cached_${N}`, first_message_ms: round(median(cached)), runs: RUNS, each: cached.map(round) }));
  console.log(JSON.stringify({ name: `reload_network_${N}`, first_message_ms: round(median(network)), runs: RUNS, each: network.map(round) }));
  console.log(JSON.stringify({ name: `catchup_unchanged_${N}`, bytes }));
  console.log(JSON.stringify({ name: 'page_head_50', bytes: made.page }));
  console.log(JSON.stringify({ name: `history_${N}`, bytes: made.history }));
} finally {
  await browser.close();
  await web.close();
  await srv.stop();
  await rm(dir, { recursive: true, force: true });
}
