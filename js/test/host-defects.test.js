// Host defects of issue 10, each pinned against a real server on loopback:
// loadOlder() called from inside a listener waits for its page and keeps
// its rejection; an HTTP error without a typed body gets the code of the
// protocol's one error table. (Timeouts' own code, timeout: session.test.js.)
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from './harness/timed.js';
import { ERROR_CODES, codeForStatus } from '../errcodes.js';
import { AgentsyncError, connect, createSession } from '../index.js';
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

// A session holding 6 messages (3 turns), closed again.
async function sessionWithHistory(t) {
  const first = await createSession(server.url, opts());
  t.after(() => first.close());
  for (let i = 0; i < 3; i++) {
    const user = await first.send(`message ${i}`);
    await first.waitFor((v) => v.messages.some((m) => m.sequence > user.sequence && m.state === 'done'));
  }
  first.close();
  return first.sessionId;
}

// Connects with a 2-message head page and calls loadOlder() from inside the
// 'status' listener that sees live: the event is queued behind the one
// being handled, and the promise must follow it, not resolve at once.
async function loadOlderFromListener(t, sessionId, fetchImpl) {
  const session = await connect({ url: server.url, sessionId, pageLimit: 2, wait: false, fetch: fetchImpl, ...opts() });
  t.after(() => session.close());
  const called = new Promise((resolve) => {
    const off = session.on('status', ({ status }) => {
      if (status !== 'live') return;
      off();
      resolve({ older: session.loadOlder() }); // wrapped: not awaited here
    });
  });
  const { older } = await called;
  return { session, older };
}

test('loadOlder from a status listener resolves once the older page is applied', async (t) => {
  const sid = await sessionWithHistory(t);
  const { session, older } = await loadOlderFromListener(t, sid);
  try {
    await older;
    assert.deepEqual(
      session.view.messages.map((m) => m.sequence),
      [3, 4, 5, 6],
      'resolved with the older page in the view',
    );
  } finally {
    session.close();
  }
});

test('loadOlder from a status listener rejects when the older page fails', async (t) => {
  const sid = await sessionWithHistory(t);
  // The real fetch, except that older pages find the network down.
  const flaky = (url, init) => (String(url).includes('before_sequence=') ? Promise.reject(new TypeError('network down')) : fetch(url, init));
  const { session, older } = await loadOlderFromListener(t, sid, flaky);
  try {
    await assert.rejects(older, (e) => e instanceof AgentsyncError && /network down/.test(e.message));
  } finally {
    session.close();
  }
});

test('an HTTP error without a typed body gets the code of the one error table', async () => {
  // A plain HTTP server standing in for a proxy: bare statuses, text bodies.
  const proxy = http.createServer((req, res) => {
    const status = Number(req.url.split('/')[2]); // /s/<status>/v1/...
    res.writeHead(status, { 'Content-Type': 'text/plain' });
    res.end(`bare ${status}`);
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${proxy.address().port}`;
  try {
    assert.equal(ERROR_CODES.timeout.status, 0, 'timeout is a host code, never an HTTP answer');
    for (const [status, code] of [
      [401, 'unauthorized'],
      [403, 'forbidden'],
      [404, 'not_found'],
      [409, 'conflict'],
      [413, 'too_large'],
      [418, 'bad_request'],
      [429, 'rate_limited'],
      [502, 'internal'],
    ]) {
      assert.equal(codeForStatus(status), code);
      // createSession POSTs /v1/sessions; the path carries the status to answer.
      await assert.rejects(createSession(`${base}/s/${status}`, opts()), (e) => e instanceof AgentsyncError && e.code === code && e.status === status, `HTTP ${status}`);
    }
  } finally {
    proxy.close();
  }
});
