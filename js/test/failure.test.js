// Issue 26, point 7, against the real server: every failure to connect is
// told at once and typed, and the controls (reconnect(), the browser's
// online event, a token provider) act.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import net from 'node:net';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, connect, createSession, deleteSession } from '../index.js';
import { startServer } from './harness/syncserver.js';

let server;

before(async () => {
  server = await startServer({ speed: '0s' });
});

after(async () => {
  await server?.stop();
});

function freePort() {
  return new Promise((resolve, reject) => {
    const ln = net.createServer();
    ln.once('error', reject);
    ln.listen(0, '127.0.0.1', () => {
      const { port } = ln.address();
      ln.close(() => resolve(port));
    });
  });
}

test('an unknown session rejects connect with not_found at once', async () => {
  const start = Date.now();
  await assert.rejects(connect({ url: server.url, sessionId: 'ses_nobody' }), (err) => {
    assert.ok(err instanceof AgentsyncError, String(err));
    assert.equal(err.code, 'not_found');
    assert.equal(err.retryable, false);
    return true;
  });
  // The default timeout is 30 s: not_found came from the server, not from it.
  assert.ok(Date.now() - start < 30000);
});

test('a session deleted under a live client closes it with not_found', async () => {
  const s = await createSession(server.url);
  const errors = [];
  s.on('error', (e) => errors.push(e));
  const ended = s.waitFor(() => false, { timeoutMs: 0 });
  await deleteSession(server.url, s.sessionId);
  await assert.rejects(ended, (err) => err instanceof AgentsyncError && err.code === 'not_found');
  assert.equal(s.status, 'closed');
  assert.equal(s.cause?.code, 'not_found');
  assert.ok(errors.some((e) => e.code === 'not_found'), 'an error event said not_found');
});

test('a refused port is a typed retryable network error on connect, and a status with its cause', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  await assert.rejects(connect({ url, sessionId: 's1' }), (err) => {
    assert.ok(err instanceof AgentsyncError, String(err));
    assert.equal(err.code, 'network');
    assert.equal(err.retryable, true);
    assert.ok(err.cause, 'the transport error is its cause');
    return true;
  });
  const statuses = [];
  const s = await connect({ url, sessionId: 's1', wait: false, onStatus: (e) => statuses.push(e) });
  try {
    await s.waitFor((v) => v.status === 'backoff', { timeoutMs: 20000 });
    const backoff = statuses.find((e) => e.status === 'backoff');
    assert.equal(backoff.cause?.code, 'network');
    assert.match(backoff.reason, /network/);
    assert.equal(s.cause?.code, 'network');
    // Every rejection is an AgentsyncError with a code, network failures included.
    await assert.rejects(s.send('hi', { retries: 0 }), (err) => err instanceof AgentsyncError && err.code === 'network');
    await assert.rejects(s.answer('int_1', { approved: true }), (err) => err instanceof AgentsyncError && err.code === 'network');
    await assert.rejects(s.action('stop'), (err) => err instanceof AgentsyncError && err.code === 'network');
    await assert.rejects(s.messages(), (err) => err instanceof AgentsyncError && err.code === 'network');
  } finally {
    s.close();
  }
});

// A TCP proxy in front of the server that can refuse everything (down) and
// come back on the same port (up).
async function switchableProxy(target) {
  const port = await freePort();
  const { hostname, port: tport } = new URL(target);
  const socks = new Set();
  let ln = null;
  let dials = 0;
  const up = () =>
    new Promise((resolve, reject) => {
      ln = net.createServer((c) => {
        dials++;
        const out = net.connect(Number(tport), hostname);
        socks.add(c).add(out);
        c.pipe(out).pipe(c);
        const drop = () => {
          c.destroy();
          out.destroy();
        };
        c.on('error', drop).on('close', drop);
        out.on('error', drop).on('close', drop);
      });
      ln.once('error', reject);
      ln.listen(port, '127.0.0.1', resolve);
    });
  const down = () =>
    new Promise((resolve) => {
      for (const s of socks) s.destroy();
      socks.clear();
      if (!ln) return resolve();
      ln.close(() => resolve());
      ln = null;
    });
  await up();
  return { url: `http://127.0.0.1:${port}`, up, down, dials: () => dials };
}

test('after an outage, reconnect() and the online event bring the session back at once', { timeout: 120000 }, async (t) => {
  const created = await createSession(server.url);
  created.close();
  const proxy = await switchableProxy(server.url);
  // A stand-in for the browser's window events (Node has none).
  const win = new EventTarget();
  globalThis.addEventListener = win.addEventListener.bind(win);
  globalThis.removeEventListener = win.removeEventListener.bind(win);
  const s = await connect({ url: proxy.url, sessionId: created.sessionId });
  try {
    for (const trigger of [() => s.reconnect(), () => win.dispatchEvent(new Event('online'))]) {
      await proxy.down();
      // Six attempts since live: the sixth backoff is 4 s at the least
      // (250 ms << 5, halved at the least jitter), against the few
      // milliseconds a trigger takes to bring the session back.
      const from = proxy.dials();
      let attempts = 0;
      const off = s.on('status', (e) => {
        if (e.status === 'backoff') attempts++;
      });
      while (attempts < 6) await new Promise((r) => setTimeout(r, 100));
      off();
      assert.equal(s.status, 'backoff');
      assert.equal(s.cause?.code, 'network');
      assert.equal(proxy.dials(), from, 'the proxy was down');
      await proxy.up();
      const t0 = Date.now();
      trigger();
      // Live well before the pending backoff could have made it.
      await s.waitFor((v) => v.status === 'live', { timeoutMs: 3000 });
      t.diagnostic(`live ${Date.now() - t0} ms after the trigger`);
      assert.equal(s.cause, null);
    }
  } finally {
    s.close();
    delete globalThis.addEventListener;
    delete globalThis.removeEventListener;
    await proxy.down();
  }
});

function jwt(secret, sub, validForS) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  // The server allows 30 s of clock skew: exp is set that much earlier.
  const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, exp: Math.floor(Date.now() / 1000) - 30 + validForS })}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

test('a token that expires mid-session: unauthorized without a provider, the new token with one', { timeout: 120000 }, async () => {
  const secret = 'test-secret-of-the-jwt-test';
  const guarded = await startServer({ speed: '0s', jwtSecret: secret });
  try {
    const owner = jwt(secret, 'u1', 600);
    const created = await createSession(guarded.url, { token: owner });
    created.close();
    const sessionId = created.sessionId;

    // A static token that expires: the next reconnect ends the session.
    const short = jwt(secret, 'u1', 3);
    const s1 = await connect({ url: guarded.url, sessionId, token: short });
    const ended = s1.waitFor(() => false, { timeoutMs: 0 });
    while (jwtValid(short)) await new Promise((r) => setTimeout(r, 200));
    s1.dropConnection();
    await assert.rejects(ended, (err) => err instanceof AgentsyncError && err.code === 'unauthorized');
    assert.equal(s1.status, 'closed');
    await assert.rejects(connect({ url: guarded.url, sessionId, token: short }), (err) => err.code === 'unauthorized');

    // A provider: asked again after the refusal, its new token is used for
    // the socket and for HTTP.
    let calls = 0;
    let current = jwt(secret, 'u1', 3);
    const s2 = await connect({ url: guarded.url, sessionId, token: async () => (calls++, current) });
    try {
      while (jwtValid(current)) await new Promise((r) => setTimeout(r, 200));
      current = jwt(secret, 'u1', 600);
      s2.dropConnection();
      await s2.waitFor((v) => v.status === 'live' && calls >= 2, { timeoutMs: 20000 });
      const m = await s2.send('with the new token');
      assert.equal(m.role, 'user');
      // Expire it again under send(): a 401, then the provider's new token.
      const expiring = jwt(secret, 'u1', 1);
      current = expiring;
      s2.http.token = expiring;
      while (jwtValid(expiring)) await new Promise((r) => setTimeout(r, 200));
      current = jwt(secret, 'u1', 600);
      const m2 = await s2.send('after a refresh');
      assert.equal(m2.role, 'user');
      assert.equal(s2.http.token, current);
    } finally {
      s2.close();
    }
  } finally {
    await guarded.stop();
  }
});

// Whether a token of jwt() is still inside its validity (with the
// server's 30 s of skew), plus a second of margin.
function jwtValid(token) {
  const { exp } = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  return Date.now() / 1000 <= exp + 30 + 1;
}
