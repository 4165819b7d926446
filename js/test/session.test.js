// The session API against the real server in Node: connect, status events,
// messages() and its typed errors, loadOlder, rebuilding after a trap or a
// core_broken answer (and not after a server's internal error frame), close.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, CORE_BROKEN, connect, createSession, decode, encode } from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;
const opts = () => ({ wasm: wasmPath, WebSocket: globalThis.WebSocket });

before(async () => {
  server = await startServer({ speed: '0s' });
});

after(async () => {
  await server?.stop();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, cond, ms = 20000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

// Sends text and waits until the view holds a done agent reply after it.
async function turn(session, text) {
  const user = await session.send(text);
  await until(`reply to ${text}`, () => {
    const last = session.view.messages.at(-1);
    return last && last.role === 'agent' && last.sequence > user.sequence && last.state === 'done';
  });
  return user;
}

test('connect reaches live, streams a reply and reports status', async (t) => {
  const seen = [];
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  session.on('status', (e) => seen.push(e.status));
  assert.equal(session.status, 'live');
  assert.equal(session.view.status, 'live');
  assert.equal(session.view.session_id, session.sessionId);
  let calls = 0;
  const unsubscribe = session.subscribe(() => calls++);
  assert.equal(calls, 1, 'a new listener gets the current view at once');
  await turn(session, 'scenario:text chars=500');
  const reply = session.view.messages.at(-1);
  assert.equal(reply.parts.find((p) => p.type === 'text').text.length, 500);
  assert.ok(calls > 1, 'the listener saw the reply');
  unsubscribe();
  const before = calls;
  await turn(session, 'hello again');
  assert.equal(calls, before, 'no call after unsubscribe');
  session.close();
  assert.equal(session.status, 'closed');
  assert.deepEqual(seen.at(-1), 'closed');
});

test('messages() reads pages and gives typed errors for bad parameters', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  await turn(session, 'one');
  await turn(session, 'two');
  const page = await session.messages({ limit: 2 });
  assert.equal(page.items.length, 2);
  assert.equal(page.total, 4);
  assert.equal(page.has_more, true);
  const older = await session.messages({ limit: 2, before_sequence: page.next_before_sequence });
  assert.deepEqual(
    older.items.map((m) => m.sequence),
    [1, 2],
  );
  for (const bad of [{ limit: 0 }, { limit: -1 }, { before_sequence: 'x' }]) {
    await assert.rejects(session.messages(bad), (e) => e instanceof AgentsyncError && e.code === 'bad_request' && e.status === 400);
  }
  await assert.rejects(session.answer('no-such-interaction', { approved: true }), (e) => e instanceof AgentsyncError && e.status >= 400);
  session.close();
});

test('loadOlder pages history into the view', async (t) => {
  const first = await createSession(server.url, opts());
  t.after(() => first.close());
  for (let i = 0; i < 3; i++) await turn(first, `message ${i}`);
  const digest = first.digest();
  first.close();

  const session = await connect({ url: server.url, sessionId: first.sessionId, pageLimit: 2, ...opts() });
  t.after(() => session.close());
  assert.ok(session.view.messages.length < 6, 'the head page only');
  assert.equal(session.view.has_more_older, true);
  while (session.view.has_more_older) await session.loadOlder();
  assert.deepEqual(
    session.view.messages.map((m) => m.sequence),
    [1, 2, 3, 4, 5, 6],
  );
  assert.equal(session.digest(), digest, 'the same digest as the session that saw it live');
  session.close();
});

test('a trap discards the instance and rebuilds from the snapshot', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  await turn(session, 'scenario:text chars=300');
  const digest = session.digest();
  const rebuilt = new Promise((resolve) => session.on('rebuild', resolve));
  const old = session.core;
  old.x = {
    ...old.x,
    agentsync_handle: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
  };
  session.dropConnection(); // the next event reaches the broken instance
  const { reason } = await rebuilt;
  assert.equal(reason.code, CORE_BROKEN, 'a trap is reported as core_broken');
  assert.equal(session.rebuilds, 1);
  await until('live after rebuild', () => session.status === 'live' && session.core && session.core !== old);
  assert.equal(session.digest(), digest, 'nothing lost');
  await turn(session, 'after the rebuild');
  session.close();
});

test('a server error frame with code internal resyncs without a rebuild; core_broken rebuilds', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  await turn(session, 'first');
  const errors = [];
  session.on('error', (e) => errors.push(e));
  let rebuilds = 0;
  session.on('rebuild', () => rebuilds++);
  const old = session.core;
  // The next WebSocket message of the live stream is replaced by a real
  // error frame (code internal) at the seq the core expects, and goes
  // through the real module.
  let answer = null;
  const realFrames = old.handleCompact; // the session's path for frames (ABI v4)
  old.handleCompact = function (data) {
    const frames = decode(data);
    if (answer === null && Array.isArray(frames) && frames[0]?.seq > 1) {
      data = encode([{ seq: frames[0].seq, kind: 'error', code: 'internal', reason: 'injected by the test' }]);
      answer = realFrames.call(this, data);
      return answer;
    }
    return realFrames.call(this, data);
  };
  await turn(session, 'scenario:text chars=300');
  assert.ok(answer, 'the error frame was injected');
  assert.equal(answer.out.error?.code, 'internal');
  assert.ok(errors.some((e) => e.code === 'internal'), 'the error is reported');
  await until('live after the resync', () => session.status === 'live');
  assert.equal(old.broken, false);
  assert.equal(session.core, old, 'the same core instance');
  assert.equal(rebuilds, 0);
  assert.equal(session.rebuilds, 0);

  // A forced panic: the module answers core_broken (as after a recovered
  // panic) and the session rebuilds from the snapshot.
  const digest = session.digest();
  const rebuilt = new Promise((resolve) => session.on('rebuild', resolve));
  old.x = {
    ...old.x,
    agentsync_handle: () => {
      const bytes = encode({ commands: [], error: { code: CORE_BROKEN, message: 'agentsync_handle: panic: forced' } });
      const ptr = old.x.agentsync_alloc(bytes.length);
      new Uint8Array(old.memory.buffer, ptr, bytes.length).set(bytes);
      return (BigInt(ptr) << 32n) | BigInt(bytes.length);
    },
  };
  session.dropConnection();
  const { reason } = await rebuilt;
  assert.equal(reason.code, CORE_BROKEN);
  assert.equal(session.rebuilds, 1);
  await until('live after rebuild', () => session.status === 'live' && session.core && session.core !== old);
  assert.equal(session.digest(), digest, 'nothing lost');
  await turn(session, 'after the rebuild');
  session.close();
});

test('dropConnection reconnects and the view catches up', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  const statuses = [];
  session.on('status', (e) => statuses.push(e.status));
  await turn(session, 'before');
  assert.equal(session.dropConnection(), true);
  assert.notEqual(session.status, 'live', 'the drop is seen at once');
  await until('live again', () => session.status === 'live');
  await turn(session, 'after');
  assert.equal(session.view.messages.length, 4);
  session.close();
  assert.equal(session.dropConnection(), false, 'nothing to drop once closed');
});

test('a bearer token reaches the API and the WebSocket (?token=)', async (t) => {
  const guarded = await startServer({ speed: '0s', token: 'sekret' });
  try {
    await assert.rejects(createSession(guarded.url, { ...opts(), token: 'wrong' }), (e) => e instanceof AgentsyncError && e.code === 'unauthorized' && e.status === 401);
    const session = await createSession(guarded.url, { ...opts(), token: 'sekret' });
    t.after(() => session.close());
    assert.equal(session.status, 'live');
    await turn(session, 'with a token');
    const page = await session.messages();
    assert.equal(page.total, 2);
    session.close();
    // A session id that is right with a token that is wrong is refused at
    // once, for good (issue 26): unauthorized, not a timeout.
    await assert.rejects(
      connect({ url: guarded.url, sessionId: session.sessionId, token: 'wrong', ...opts() }),
      (e) => e instanceof AgentsyncError && e.code === 'unauthorized' && e.retryable === false,
    );
  } finally {
    await guarded.stop();
  }
});

test('listeners get the final view even when session.view is read in between', async (t) => {
  // Reading session.view flushes pending changes; listeners must still be
  // told about them when the scheduled flush runs (a page that polled the
  // view once froze mid-stream). The scheduler here runs only when the test
  // says so, so the read always lands in between.
  let pending = null;
  const session = await createSession(server.url, { ...opts(), schedule: (fn) => { pending = fn; } });
  t.after(() => session.close());
  try {
    let last = null;
    session.subscribe((v) => { last = v; });
    await turn(session, 'scenario:text chars=2000 delta=7'); // turn() reads session.view until done
    assert.ok(pending, 'a flush was scheduled');
    pending();
    const reply = last.messages.at(-1);
    assert.equal(reply?.role, 'agent', 'the listener saw the reply');
    assert.equal(reply.state, 'done', 'the listener saw the reply closed');
    assert.equal(reply.parts.find((p) => p.type === 'text').text.length, 2000);
    assert.equal(last, session.view, 'the listener holds the current view');
  } finally {
    session.close();
  }
});

test('waitFor resolves on a matching view, rejects on timeout and on close', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  try {
    const now = await session.waitFor((v) => v.status === 'live');
    assert.equal(now.status, 'live', 'the current view counts');
    const user = await session.send('scenario:text chars=300');
    const v = await session.waitFor((v) => v.messages.some((m) => m.sequence > user.sequence && m.state === 'done'));
    assert.equal(v.messages.at(-1).parts.find((p) => p.type === 'text').text.length, 300);
    await assert.rejects(session.waitFor(() => false, { timeoutMs: 50 }), { code: 'timeout' });
    const pending = session.waitFor(() => false, { timeoutMs: 0 });
    session.close();
    await assert.rejects(pending, { code: 'closed' });
    await assert.rejects(session.waitFor(() => true), { code: 'closed' }, 'a closed session has nothing to wait for');
  } finally {
    session.close();
  }
});
