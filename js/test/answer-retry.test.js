// Session.answer() and action() against the real server, through a small
// HTTP proxy that refuses the first attempt as a node that lost the
// session does (503 closed with Retry-After): the host sends it again and
// the server serves it. A cut connection is not retried (an answer must
// not be sent twice).

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from './harness/timed.js';
import { createSession } from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;

before(async () => {
  server = await startServer({ speed: '0s' });
});

after(async () => {
  await server?.stop();
});

// A proxy for the POSTs whose path ends with suffix: the first is refused
// 503 (or cut, with cut), the next ones pass. calls counts them.
async function refusingProxy(t, suffix, { cut = false } = {}) {
  const state = { calls: 0 };
  const proxy = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    state.calls++;
    if (state.calls === 1 || cut) {
      if (cut) return req.socket.destroy();
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      return res.end(JSON.stringify({ code: 'closed', message: 'node "a" cannot tell who serves the session right now; retry' }));
    }
    const headers = { ...req.headers };
    for (const h of ['host', 'connection', 'content-length']) delete headers[h];
    const r = await fetch(server.url + req.url, { method: req.method, headers, body: Buffer.concat(chunks) });
    res.writeHead(r.status, { 'Content-Type': r.headers.get('content-type') ?? 'application/json' });
    res.end(await r.text());
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  t.after(() => {
    proxy.closeAllConnections();
    return new Promise((r) => proxy.close(r));
  });
  const host = `127.0.0.1:${proxy.address().port}`;
  state.fetch = (input, init) => {
    const url = new URL(String(input));
    if (init?.method === 'POST' && url.pathname.endsWith(suffix)) url.host = host;
    return fetch(url, init);
  };
  return state;
}

async function open(t, proxy) {
  const session = await createSession(server.url, { wasm: wasmPath, WebSocket: globalThis.WebSocket, fetch: proxy.fetch });
  t.after(() => session.close());
  return session;
}

function pendingInteraction(view) {
  for (const m of view.messages) for (const p of m.parts) if (p.type === 'interaction' && p.status === 'pending') return p.interaction_id;
  return undefined;
}

test('an answer refused 503 is sent again and reaches the approval', async (t) => {
  const answers = await refusingProxy(t, '');
  const session = await open(t, { fetch: (input, init) => (String(input).includes('/interactions/') ? answers.fetch(input, init) : fetch(input, init)) });
  await session.send('scenario:approval');
  await session.waitFor((v) => pendingInteraction(v) !== undefined, { timeoutMs: 10000 });
  const id = pendingInteraction(session.view);
  const msg = await session.answer(id, { approved: true });
  assert.equal(answers.calls, 2, 'refused once, then served');
  assert.ok(msg.parts.some((p) => p.type === 'interaction' && p.interaction_id === id && p.status === 'resolved'));
});

test('an action refused 503 is sent again; a cut one is not', async (t) => {
  const proxy = await refusingProxy(t, '/actions');
  const session = await open(t, proxy);
  const msg = await session.action('set_approval_mode', 'ask');
  assert.equal(proxy.calls, 2, 'refused once, then served');
  assert.ok(msg.parts.some((p) => p.type === 'action'));

  const cutting = await refusingProxy(t, '/actions', { cut: true });
  const other = await open(t, cutting);
  await assert.rejects(other.action('set_approval_mode', 'auto'));
  assert.equal(cutting.calls, 1, 'a cut action is not sent again');
});
