// The Session's lifecycle against the real server on loopback (issue 23):
// close() called from a 'status' listener leaves no WebSocket open, a core
// that finishes loading after close() is freed and never started, and
// loadOlder() (or setIncludeInternal) while the core rebuilds rejects
// instead of resolving with nothing done.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, CORE_BROKEN, connect, createSession } from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;
let wasmBytes;

before(async () => {
  server = await startServer({ speed: '0s' });
  wasmBytes = await readFile(wasmPath);
});

after(async () => {
  await server?.stop();
});

// A WebSocket class that records every socket made and whether the host
// closed it.
function trackingSockets() {
  const made = [];
  class TrackingSocket extends globalThis.WebSocket {
    constructor(...args) {
      super(...args);
      this.closedByHost = false;
      made.push(this);
    }
    close(...args) {
      this.closedByHost = true;
      return super.close(...args);
    }
  }
  return { made, WebSocket: TrackingSocket };
}

// A module of its own (a WebAssembly.Module nobody else used), so no idle
// instance of another test serves its Core.load: a rebuild instantiates.
async function freshModule() {
  return WebAssembly.compile(wasmBytes);
}

// Holds every WebAssembly.instantiate until release(); loaded resolves
// with the instance once one held call finished. Restored by t.after.
function holdInstantiate(t) {
  const real = WebAssembly.instantiate;
  let release;
  const gate = new Promise((r) => (release = r));
  let loadedResolve;
  const loaded = new Promise((r) => (loadedResolve = r));
  let held = 0;
  let heldResolve;
  const heldOnce = new Promise((r) => (heldResolve = r));
  WebAssembly.instantiate = async (...args) => {
    held++;
    heldResolve();
    await gate;
    const r = await real.apply(WebAssembly, args);
    loadedResolve(r);
    return r;
  };
  t.after(() => {
    WebAssembly.instantiate = real;
    release();
  });
  return { release: () => release(), loaded, heldOnce, held: () => held };
}

// Makes the session's core trap on its next event, and gives a promise of
// the 'rebuild' event that follows.
function trapNext(session) {
  const rebuilt = new Promise((resolve) => session.on('rebuild', resolve));
  const core = session.core;
  core.x = {
    ...core.x,
    agentsync_handle: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
  };
  return rebuilt;
}

// A macrotask: every microtask queued before it (a promise chain that ends
// in an assignment) has run.
const nextTask = () => new Promise((r) => setImmediate(r));

test('close() from a status listener leaves no WebSocket open', async (t) => {
  const sockets = trackingSockets();
  const session = await createSession(server.url, { wasm: wasmPath, WebSocket: sockets.WebSocket });
  t.after(() => session.close());
  assert.equal(session.status, 'live');
  // The reconnect after a drop reports 'connecting' and then opens a
  // socket, in one answer of the core: the listener closes in between.
  const closed = new Promise((resolve) => {
    session.on('status', ({ status }) => {
      if (status === 'connecting') session.close();
      if (status === 'closed') resolve();
    });
  });
  assert.equal(session.dropConnection(), true);
  await closed;
  await nextTask();
  assert.equal(session.status, 'closed');
  const open = sockets.made.filter((ws) => !ws.closedByHost);
  assert.deepEqual(
    open.map((ws) => ws.url),
    [],
    `${sockets.made.length} sockets made, every one closed by the host`,
  );
});

test('close() from a backoff listener sets no timer and opens nothing', async (t) => {
  const sockets = trackingSockets();
  const session = await createSession(server.url, { wasm: wasmPath, WebSocket: sockets.WebSocket });
  t.after(() => session.close());
  session.on('status', ({ status }) => {
    if (status === 'backoff') session.close();
  });
  const made = sockets.made.length;
  session.dropConnection();
  assert.equal(session.status, 'closed');
  assert.equal(session.loop.timers.size, 0, 'no reconnect timer left behind');
  await nextTask();
  assert.equal(sockets.made.length, made, 'no socket made after close');
});

test('a core that finishes loading after close() is freed, not started', async (t) => {
  const sockets = trackingSockets();
  const session = await createSession(server.url, { wasm: await freshModule(), WebSocket: sockets.WebSocket });
  t.after(() => session.close());
  const hold = holdInstantiate(t);
  const rebuilt = trapNext(session);
  session.dropConnection();
  await rebuilt;
  await hold.heldOnce; // the rebuild is loading its new core
  const made = sockets.made.length;
  session.close();
  hold.release();
  await hold.loaded;
  await nextTask();
  assert.equal(session.status, 'closed');
  assert.equal(session.core, null, 'the late core is not the session\'s');
  assert.equal(sockets.made.length, made, 'nothing was started on it');
  assert.throws(() => session.digest(), (e) => e instanceof AgentsyncError && e.code === 'closed');
});

test('loadOlder() and setIncludeInternal() reject while the core rebuilds', async (t) => {
  // A session with history, so a loadOlder has an older page to read.
  const first = await createSession(server.url, { wasm: wasmPath, WebSocket: globalThis.WebSocket });
  t.after(() => first.close());
  for (let i = 0; i < 2; i++) {
    const user = await first.send(`message ${i}`);
    await first.waitFor((v) => v.messages.some((m) => m.sequence > user.sequence && m.state === 'done'));
  }
  first.close();
  const session = await connect({ url: server.url, sessionId: first.sessionId, pageLimit: 2, wasm: await freshModule(), WebSocket: globalThis.WebSocket });
  t.after(() => session.close());
  assert.equal(session.view.has_more_older, true);
  const hold = holdInstantiate(t);
  const rebuilt = trapNext(session);
  session.dropConnection();
  await rebuilt;
  await hold.heldOnce;
  assert.equal(session.core, null, 'rebuilding');
  await assert.rejects(session.loadOlder(), (e) => e instanceof AgentsyncError && e.code === CORE_BROKEN, 'loadOlder while rebuilding');
  await assert.rejects(session.setIncludeInternal(true), (e) => e instanceof AgentsyncError && e.code === CORE_BROKEN, 'setIncludeInternal while rebuilding');
  hold.release();
  await session.waitFor((v) => v.status === 'live');
  await session.loadOlder();
  assert.deepEqual(
    session.view.messages.map((m) => m.sequence),
    [1, 2, 3, 4],
    'a loadOlder once live again pages as ever',
  );
});

test('a loadOlder whose page a rebuild abandons rejects; one after close() rejects', async (t) => {
  const first = await createSession(server.url, { wasm: wasmPath, WebSocket: globalThis.WebSocket });
  t.after(() => first.close());
  for (let i = 0; i < 2; i++) {
    const user = await first.send(`message ${i}`);
    await first.waitFor((v) => v.messages.some((m) => m.sequence > user.sequence && m.state === 'done'));
  }
  first.close();
  // Older pages never answer until the test says so: the rebuild comes first.
  let answerOlder;
  const olderGate = new Promise((r) => (answerOlder = r));
  t.after(() => answerOlder());
  const slowOlder = async (url, init) => {
    if (String(url).includes('before_sequence=')) await olderGate;
    return fetch(url, init);
  };
  const session = await connect({ url: server.url, sessionId: first.sessionId, pageLimit: 2, fetch: slowOlder, wasm: wasmPath, WebSocket: globalThis.WebSocket });
  t.after(() => session.close());
  const older = session.loadOlder();
  const rebuilt = trapNext(session);
  session.dropConnection();
  await rebuilt;
  await assert.rejects(older, (e) => e instanceof AgentsyncError && e.code === CORE_BROKEN, 'the page was abandoned');
  answerOlder();
  await session.waitFor((v) => v.status === 'live');
  session.close();
  await assert.rejects(session.loadOlder(), (e) => e instanceof AgentsyncError && e.code === 'closed');
});
