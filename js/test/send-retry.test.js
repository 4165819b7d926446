// Session.send() against the real server, with failures injected by a small
// HTTP proxy in front of it: a post whose answer is lost is retried under the
// same Idempotency-Key and posted once; 429 and 503 are retried after
// Retry-After or a backoff; any other error is thrown at once.

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, createSession } from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;

before(async () => {
  server = await startServer({ speed: '0s' });
});

after(async () => {
  await server?.stop();
});

// Starts a proxy to the server for POST .../messages. handle({req, res, n,
// forward}) answers the n-th post (1-based); forward() sends it on to the
// server and returns the server's answer. attempts records each post's time
// and Idempotency-Key.
async function startProxy(t, handle) {
  const attempts = [];
  const proxy = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    attempts.push({ at: Date.now(), key: req.headers['idempotency-key'] });
    const forward = async () => {
      const headers = { ...req.headers };
      for (const h of ['host', 'connection', 'content-length']) delete headers[h];
      const r = await fetch(server.url + req.url, { method: req.method, headers, body });
      return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
    };
    try {
      await handle({ req, res, n: attempts.length, forward });
    } catch (err) {
      res.destroy(err);
    }
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  t.after(() => {
    proxy.closeAllConnections();
    return new Promise((r) => proxy.close(r));
  });
  const proxyHost = `127.0.0.1:${proxy.address().port}`;
  // The session's fetch: only the posts of messages go through the proxy;
  // creating the session and reading pages go straight to the server (the
  // WebSocket does anyway).
  const viaProxy = (input, init) => {
    const url = new URL(String(input));
    if (init?.method === 'POST' && url.pathname.endsWith('/messages')) url.host = proxyHost;
    return fetch(url, init);
  };
  return { attempts, fetch: viaProxy };
}

const answer = (res, status, body, headers = {}) => {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};
const pass = async ({ res, forward }) => {
  const a = await forward();
  answer(res, a.status, a.text, { 'Content-Type': a.type ?? 'application/json' });
};

async function open(t, proxy) {
  const session = await createSession(server.url, { wasm: wasmPath, WebSocket: globalThis.WebSocket, fetch: proxy.fetch });
  t.after(() => session.close());
  return session;
}

// The user messages of the session, read from the server (through no proxy).
async function userMessages(session) {
  const page = await session.messages({ limit: 200 });
  return page.items.filter((m) => m.role === 'user');
}

test('a post whose answer is lost is retried under its key and posted once', async (t) => {
  const committed = [];
  const proxy = await startProxy(t, async ({ req, res, n, forward }) => {
    if (n > 1) return pass({ res, forward });
    // The server commits the first post; its answer never reaches the client.
    const a = await forward();
    committed.push({ status: a.status, message: JSON.parse(a.text) });
    req.socket.destroy();
  });
  const session = await open(t, proxy);
  const msg = await session.send('lost answer');
  assert.equal(proxy.attempts.length, 2, 'one retry');
  assert.equal(committed[0].status, 201, 'the first attempt was committed');
  assert.ok(proxy.attempts[0].key, 'the first attempt carries a key');
  assert.equal(proxy.attempts[1].key, proxy.attempts[0].key, 'the retry carries the same key');
  assert.equal(msg.message_id, committed[0].message.message_id, 'the retry answers the committed message');
  const users = (await userMessages(session)).filter((m) => m.parts[0]?.text === 'lost answer');
  assert.equal(users.length, 1, 'posted exactly once');
  assert.equal(users[0].message_id, msg.message_id);
  await session.waitFor((v) => v.messages.some((m) => m.message_id === msg.message_id), { timeoutMs: 10000 });
});

test('a key passed in posts once across separate calls (a retry after a reload)', async (t) => {
  const proxy = await startProxy(t, pass);
  const session = await open(t, proxy);
  const key = `draft-${Date.now()}`;
  const first = await session.send('keep my key', { idempotencyKey: key });
  const again = await session.send('keep my key', { idempotencyKey: key });
  assert.equal(again.message_id, first.message_id);
  assert.deepEqual(
    proxy.attempts.map((a) => a.key),
    [key, key],
  );
  const other = await session.send('keep my key');
  assert.notEqual(other.message_id, first.message_id, 'without a key each call is its own post');
  assert.notEqual(proxy.attempts[2].key, key);
  assert.equal((await userMessages(session)).length, 2);
});

test('429 is retried after its Retry-After', async (t) => {
  const proxy = await startProxy(t, async ({ res, n, forward }) => {
    if (n === 1) return answer(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'Retry-After': '1' });
    return pass({ res, forward });
  });
  const session = await open(t, proxy);
  const msg = await session.send('after a pause');
  assert.equal(msg.role, 'user');
  assert.equal(proxy.attempts.length, 2);
  const gap = proxy.attempts[1].at - proxy.attempts[0].at;
  assert.ok(gap >= 900, `waited ${gap} ms, Retry-After said 1 s`);
  assert.equal(proxy.attempts[1].key, proxy.attempts[0].key);
});

test('503 without Retry-After backs off from 250 ms, then gives up after `retries`', async (t) => {
  const proxy = await startProxy(t, ({ res }) => answer(res, 503, { code: 'closed', message: 'draining' }));
  const session = await open(t, proxy);
  await assert.rejects(session.send('never', { retries: 2 }), (e) => e instanceof AgentsyncError && e.code === 'closed' && e.status === 503);
  assert.equal(proxy.attempts.length, 3, 'one attempt and two retries');
  const gaps = [1, 2].map((i) => proxy.attempts[i].at - proxy.attempts[i - 1].at);
  assert.ok(gaps[0] >= 230 && gaps[1] >= 480, `backoff gaps ${gaps}`);
  assert.ok(proxy.attempts.every((a) => a.key === proxy.attempts[0].key));
});

test('a 400 is thrown at once, with one attempt', async (t) => {
  const proxy = await startProxy(t, pass);
  const session = await open(t, proxy);
  await assert.rejects(session.send([{ type: 'text', text: '' }]), (e) => e instanceof AgentsyncError && e.status === 400);
  assert.equal(proxy.attempts.length, 1);
});

test('retries: 0 gives up on a 503 after one attempt', async (t) => {
  // A Retry-After of 25 s: waited out, the call would take that long (a
  // bound far from what one attempt takes on any machine).
  const proxy = await startProxy(t, ({ res }) => answer(res, 503, { code: 'closed', message: 'draining' }, { 'Retry-After': '25' }));
  const session = await open(t, proxy);
  const start = Date.now();
  await assert.rejects(session.send('once', { retries: 0 }), (e) => e instanceof AgentsyncError && e.code === 'closed' && e.status === 503);
  assert.equal(proxy.attempts.length, 1);
  assert.ok(Date.now() - start < 20000, 'no wait for Retry-After');
});

test('a Retry-After over 30 s is the caller\'s at once', async (t) => {
  const proxy = await startProxy(t, ({ res }) => answer(res, 503, { code: 'closed', message: 'back in an hour' }, { 'Retry-After': '3600' }));
  const session = await open(t, proxy);
  await assert.rejects(session.send('not waiting an hour'), (e) => e instanceof AgentsyncError && e.code === 'closed' && e.status === 503);
  assert.equal(proxy.attempts.length, 1);
});

test('closing the session during a wait rejects with closed', async (t) => {
  const proxy = await startProxy(t, ({ res }) => answer(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'Retry-After': '20' }));
  const session = await open(t, proxy);
  const start = Date.now();
  const sent = session.send('closed while waiting');
  while (proxy.attempts.length === 0) await new Promise((r) => setTimeout(r, 10));
  session.close();
  await assert.rejects(sent, (e) => e instanceof AgentsyncError && e.code === 'closed' && e.status === undefined);
  assert.ok(Date.now() - start < 5000, 'did not wait out Retry-After');
  assert.equal(proxy.attempts.length, 1);
});

test('a bad idempotencyKey or retries is refused before any post', async (t) => {
  const proxy = await startProxy(t, pass);
  const session = await open(t, proxy);
  await assert.rejects(session.send('x', { idempotencyKey: '' }), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
  await assert.rejects(session.send('x', { retries: -1 }), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
  assert.equal(proxy.attempts.length, 0);
});
