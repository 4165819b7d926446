// The local cache and the outbox (cache.js, protocol §6.9) in Node against
// the real server, with a MemoryCacheStore shared by the Sessions that
// stand for a page before and after a reload: the cached window renders
// at once and the catch-up reads one page; a deleted session is not served
// from the cache; sends made with the server down are posted once each, in
// order, when it is back, a lost answer included; a refused send is a
// failed message that can be discarded; a send is never shown twice.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from './harness/timed.js';
import { MemoryCacheStore, connect, createSession, deleteSession } from '../index.js';
import { serve } from './harness/restartable.js';
import { wasmPath } from './paths.js';

const base = () => ({ wasm: wasmPath, WebSocket: globalThis.WebSocket });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, cond, ms = 30000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

let dir;
let server;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'agentsync-cache-'));
  server = await serve(path.join(dir, 'a.db'));
});

after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// n turns (a user message and its done reply each) on a session without cache.
async function history(url, n) {
  const s = await createSession(url, base());
  for (let i = 0; i < n; i++) {
    const user = await s.send(`turn ${i}`);
    await s.waitFor((v) => v.messages.some((m) => m.role === 'agent' && m.sequence > user.sequence && m.state === 'done'));
  }
  s.close();
  return s.sessionId;
}

// The digest of a fresh session without cache holding the whole history.
async function serverDigest(url, sessionId, pageLimit) {
  const s = await connect({ ...base(), url, sessionId, pageLimit });
  while (s.view.has_more_older) await s.loadOlder();
  const d = { digest: s.digest(), count: s.view.messages.length };
  s.close();
  return d;
}

// A fetch that counts the page reads and their bytes.
function counting() {
  const c = { pages: 0, bytes: 0 };
  c.fetch = async (url, init) => {
    const res = await fetch(url, init);
    if (String(url).includes('/messages') && (init?.method ?? 'GET') === 'GET') {
      const buf = await res.arrayBuffer();
      c.pages++;
      c.bytes += buf.byteLength;
      return new Response(buf, { status: res.status, headers: res.headers });
    }
    return res;
  };
  return c;
}

test('a reload renders the cached window at once, then catches up with one page', async (t) => {
  const sessionId = await history(server.url, 30);
  const store = new MemoryCacheStore();
  const first = await connect({ ...base(), url: server.url, sessionId, pageLimit: 10, cache: store });
  t.after(() => first.close());
  while (first.view.has_more_older) await first.loadOlder();
  assert.equal(first.view.messages.length, 60);
  await first.cache.flush();
  first.close();

  const c = counting();
  const statuses = [];
  const second = await connect({ ...base(), url: server.url, sessionId, pageLimit: 10, cache: store, fetch: c.fetch, onStatus: (e) => statuses.push(e.status) });
  t.after(() => second.close());
  // connect() resolves with the cached window: no need to wait for live.
  const shown = second.view;
  assert.equal(shown.cached, true, 'the first view is the cached one');
  assert.notEqual(shown.status, 'live');
  assert.equal(shown.messages.length, 60, 'the whole cached window renders');
  assert.equal(statuses[0], 'cached');
  const live = await second.waitFor((v) => v.status === 'live');
  assert.equal(live.cached, false);
  assert.equal(live.messages.length, 60, 'the window after catch-up is the cached one');
  assert.equal(live.has_more_older, false);
  assert.equal(c.pages, 1, 'one page read to catch up');
  assert.ok(second.cache.catchUpBytes > 0 && second.cache.catchUpBytes === c.bytes);
  const fresh = await serverDigest(server.url, sessionId, 10);
  assert.equal(fresh.count, 60);
  assert.equal(second.digest(), fresh.digest, 'the cached view after catch-up equals the server pages');

  // New messages since the cache: read from the head back to them.
  const user = await second.send('after the reload');
  await second.waitFor((v) => v.messages.some((m) => m.role === 'agent' && m.sequence > user.sequence && m.state === 'done'));
  await second.cache.flush();
  second.close();
  const writer = await connect({ ...base(), url: server.url, sessionId });
  for (let i = 0; i < 12; i++) {
    const u = await writer.send(`elsewhere ${i}`);
    await writer.waitFor((v) => v.messages.some((m) => m.role === 'agent' && m.sequence > u.sequence && m.state === 'done'));
  }
  writer.close();
  const c3 = counting();
  const third = await connect({ ...base(), url: server.url, sessionId, pageLimit: 10, cache: store, fetch: c3.fetch });
  t.after(() => third.close());
  assert.equal(third.view.messages.length, 62);
  await third.waitFor((v) => v.status === 'live');
  assert.equal(c3.pages, 3, '24 new messages at 10 a page: three pages back to the cache');
  assert.equal(third.view.messages.length, 86);
  assert.deepEqual(third.view.messages.map((m) => m.sequence), Array.from({ length: 86 }, (_, i) => i + 1));
  assert.equal(third.digest(), (await serverDigest(server.url, sessionId, 10)).digest);
});

test('a session deleted elsewhere is not served from the cache after catch-up', async (t) => {
  const sessionId = await history(server.url, 2);
  const store = new MemoryCacheStore();
  const first = await connect({ ...base(), url: server.url, sessionId, cache: store });
  t.after(() => first.close());
  await first.cache.flush();
  first.close();
  assert.equal((await store.list()).length, 1);
  await deleteSession(server.url, sessionId);
  const second = await connect({ ...base(), url: server.url, sessionId, cache: store, wait: false });
  t.after(() => second.close());
  await until('the session closes', () => second.closed);
  assert.equal(second.cause?.code, 'not_found');
  assert.equal(second.view.messages.length, 0, 'the cached window is dropped');
  await until('the window is removed', () => store.windows.size === 0);
});

test('a change of principal clears what the previous one cached', async () => {
  const store = new MemoryCacheStore();
  const sessionId = await history(server.url, 1);
  const a = await connect({ ...base(), url: server.url, sessionId, cache: { store, principal: 'alice' } });
  await a.cache.flush();
  a.close();
  assert.equal((await store.list())[0].key.startsWith('alice'), true);
  const b = await connect({ ...base(), url: server.url, sessionId, cache: { store, principal: 'bob' } });
  assert.notEqual(b.view.cached, true, "bob is not shown alice's window");
  assert.ok(!(await store.list()).some((w) => w.key.startsWith('alice')), "alice's windows are gone");
  b.close();
});

test('sends made offline survive a reload and are posted once each, in order', async (t) => {
  const db = path.join(dir, 'offline.db');
  let srv = await serve(db);
  t.after(() => srv.stop());
  const sessionId = await history(srv.url, 2);
  const store = new MemoryCacheStore();
  const first = await connect({ ...base(), url: srv.url, sessionId, cache: store });
  await first.cache.flush();
  first.close();
  await srv.stop();

  const offline = await connect({ ...base(), url: srv.url, sessionId, cache: store });
  t.after(() => offline.close());
  assert.equal(offline.view.cached, true);
  await until('offline', () => offline.offline);
  assert.equal(offline.view.offline, true);
  const sent = [offline.send('one offline'), offline.send('two offline')];
  for (const p of sent) p.catch(() => {}); // the reload cuts them short
  const v = offline.view;
  assert.deepEqual(v.messages.slice(-2).map((m) => [m.parts[0].text, m.pending]), [['one offline', true], ['two offline', true]]);
  await until('both persisted', () => store.boxes.values().next().value?.size === 2);
  assert.equal(offline.outbox.length, 2);
  offline.close(); // the reload

  // The next page finds the outbox; the first post's answer is lost (the
  // server commits it, the page never hears): it stays in the outbox.
  srv = await serve(db, srv.addr);
  let lost = 0;
  const losing = async (url, init) => {
    const res = await fetch(url, init);
    if (init?.method === 'POST' && lost === 0) {
      lost++;
      throw new TypeError('the answer was lost');
    }
    return res;
  };
  const cut = await connect({ ...base(), url: srv.url, sessionId, cache: store, fetch: losing, wait: false });
  await until('the post was made and its answer lost', () => lost === 1);
  cut.close();
  await until('the outbox holds both again', () => store.boxes.values().next().value?.size === 2);

  const back = await connect({ ...base(), url: srv.url, sessionId, cache: store });
  t.after(() => back.close());
  assert.equal(back.outbox.length, 2, 'the outbox was restored');
  await back.waitFor((view) => view.status === 'live' && back.outbox.length === 0 &&
    !view.messages.some((m) => m.pending) && view.messages.filter((m) => m.role === 'user' && / offline$/.test(m.parts[0].text)).length === 2);
  const page = await back.messages({ limit: 200 });
  const texts = page.items.filter((m) => m.role === 'user').map((m) => m.parts[0].text);
  assert.deepEqual(texts.filter((x) => x.endsWith('offline')), ['one offline', 'two offline'], 'each once, in order');
  assert.equal(store.boxes.values().next().value.size, 0, 'the outbox is empty');
});

test('a send is shown at once and replaced by the server message, never both', async (t) => {
  const session = await createSession(server.url, { ...base(), outbox: true });
  t.after(() => session.close());
  const views = [];
  session.subscribe((v) => views.push(v));
  const p = session.send('optimistic');
  assert.equal(session.view.messages.at(-1).pending, true, 'pending at once');
  const msg = await p;
  await session.waitFor((v) => v.messages.some((m) => m.message_id === msg.message_id) && v.messages.some((m) => m.role === 'agent' && m.state === 'done'));
  for (const v of views) {
    const n = v.messages.filter((m) => m.role === 'user' && m.parts[0]?.text === 'optimistic').length;
    assert.ok(n <= 1, 'never both');
  }
  const last = views.at(-1).messages.filter((m) => m.role === 'user');
  assert.equal(last.length, 1);
  assert.equal(last[0].message_id, msg.message_id);
  assert.ok(!last[0].pending);
  assert.ok(views.every((v) => v.messages.some((m) => m.role === 'user')) || views[0].messages.length === 0, 'never neither once sent');
});

test('a refused send is a failed message that can be retried or discarded', async (t) => {
  const session = await createSession(server.url, { ...base(), outbox: true });
  t.after(() => session.close());
  await assert.rejects(session.send([{ type: 'context', tag: 'two words', context: 'x' }]), (err) => err.code === 'invalid_part' || err.code === 'bad_request');
  const failed = session.view.messages.at(-1);
  assert.equal(failed.failed, true);
  assert.equal(failed.pending, false);
  assert.equal(session.outbox[0].state, 'failed');
  await assert.rejects(session.retrySend(session.outbox[0].id));
  assert.equal(session.outbox.length, 1);
  assert.equal(await session.discardSend(session.outbox[0].id), true);
  assert.equal(session.outbox.length, 0);
  assert.equal(session.view.messages.length, 0);
});

test('a cached window the server numbers otherwise is dropped, not served stale', async (t) => {
  const sessionId = await history(server.url, 3);
  const store = new MemoryCacheStore();
  const first = await connect({ ...base(), url: server.url, sessionId, cache: store });
  await first.cache.flush();
  first.close();
  // The cache's copy of message 5 has another id than the server's: what
  // a copy of another history (a session made again under the same id) holds.
  const w = [...store.windows.values()][0];
  const m5 = w.messages.get(5);
  w.messages.set(5, { ...m5, message_id: 'msg_not_the_servers' });
  const second = await connect({ ...base(), url: server.url, sessionId, cache: store });
  t.after(() => second.close());
  assert.equal(second.view.cached, true);
  const live = await second.waitFor((v) => v.status === 'live');
  assert.ok(!live.messages.some((m) => m.message_id === 'msg_not_the_servers'), 'the stale copy is not shown once live');
  assert.equal(second.digest(), (await serverDigest(server.url, sessionId, 0)).digest);
  await second.cache.flush();
  const again = [...store.windows.values()][0];
  assert.notEqual(again?.messages.get(5)?.message_id, 'msg_not_the_servers', 'nor kept');
});
