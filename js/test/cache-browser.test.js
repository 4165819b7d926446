// The IndexedDB cache and the outbox in headless Chromium against the real
// server, through the served package (idb mapped by an import map): a long
// session loaded once renders from the cache after a reload with the server
// stopped (status offline); two messages sent offline survive a second
// reload and arrive once each, in order, when the server is back; the view
// after catch-up equals the server's pages (digest).

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { after, before, test } from './harness/timed.js';
import { CHROMIUM_ARGS } from './harness/browser.js';
import { longSession, serve } from './harness/restartable.js';
import { startStaticServer } from './harness/static-server.js';
import { chromiumPath } from './paths.js';

let dir;
let srv;
let web;
let browser;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'agentsync-cache-web-'));
  srv = await serve(path.join(dir, 'web.db'));
  web = await startStaticServer({ backend: srv.addr });
  browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close();
  await web?.close();
  await srv?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('Chromium: cached reload offline, an outbox across reloads, the digest after catch-up', { timeout: 240000 }, async () => {
  const t0 = Date.now();
  const step = (what) => console.error(`# ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  const sessionId = await longSession(srv.url, 150);
  step('history made');
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`));
  await page.goto(`${web.url}/js/test/cache.html`);
  try {
    // Load the whole history once (the cache keeps it).
    const loaded = await page.evaluate(async ({ sessionId }) => {
      const { open, until } = await import('/js/test/cache-page.js');
      const { session } = await open({ sessionId, pageLimit: 50 });
      await until(() => session.status === 'live');
      while (session.view.has_more_older) await session.loadOlder();
      await session.cache.flush();
      return { count: session.view.messages.length, cached: session.view.cached };
    }, { sessionId });
    assert.deepEqual(loaded, { count: 300, cached: false });

    step('next');
    // Reload with the server stopped: the cache renders, the status says offline.
    await srv.stop();
    await page.reload();
    const offline = await page.evaluate(async ({ sessionId }) => {
      const { open, until } = await import('/js/test/cache-page.js');
      const { session, cached } = await open({ sessionId, pageLimit: 50 });
      const first = { count: session.view.messages.length, cached };
      await until(() => session.offline);
      session.send('first offline').catch(() => {});
      session.send('second offline').catch(() => {});
      const v = session.view;
      const pending = v.messages.filter((m) => m.pending).map((m) => m.parts[0].text);
      await until(() => session.outbox.length === 2);
      // Persisted before any post: what a reload finds.
      const key = session.cache.boxKey();
      let saved = [];
      for (let i = 0; i < 100 && saved.length < 2; i++) {
        saved = await session.cache.box.outbox(key);
        await new Promise((r) => setTimeout(r, 20));
      }
      return { ...first, status: v.status, offline: v.offline, viewCached: v.cached, pending, saved: saved.length };
    }, { sessionId });
    assert.equal(offline.count, 300, 'the whole cached window renders');
    assert.equal(offline.cached, true);
    assert.equal(offline.viewCached, true);
    assert.equal(offline.offline, true, 'status offline');
    assert.notEqual(offline.status, 'live');
    assert.deepEqual(offline.pending, ['first offline', 'second offline'], 'shown at once, pending');
    assert.equal(offline.saved, 2);

    step('next');
    // Reload again, still offline: the outbox is there, nothing is lost.
    await page.reload();
    const again = await page.evaluate(async ({ sessionId }) => {
      const { open } = await import('/js/test/cache-page.js');
      const { session } = await open({ sessionId, pageLimit: 50 });
      return { count: session.view.messages.length, outbox: session.outbox.map((e) => e.parts[0].text) };
    }, { sessionId });
    assert.deepEqual(again, { count: 302, outbox: ['first offline', 'second offline'] });

    step('next');
    // The server comes back: each message arrives once, in order.
    srv = await serve(path.join(dir, 'web.db'), srv.addr);
    const synced = await page.evaluate(async ({ sessionId }) => {
      const { until, serverDigest } = await import('/js/test/cache-page.js');
      const session = window.__session;
      session.reconnect();
      await until(() => session.status === 'live' && session.outbox.length === 0 &&
        session.view.messages.filter((m) => m.role === 'agent' && m.sequence > 300 && m.state === 'done').length > 0 &&
        !session.view.messages.some((m) => m.pending || m.state === 'streaming'), 60000);
      const texts = session.view.messages.filter((m) => m.role === 'user' && m.parts[0].text.endsWith('offline')).map((m) => m.parts[0].text);
      const server = await serverDigest(sessionId, 50);
      while (session.view.has_more_older) await session.loadOlder();
      return { texts, digest: session.digest(), count: session.view.messages.length, server };
    }, { sessionId });
    assert.deepEqual(synced.texts, ['first offline', 'second offline'], 'each once, in order');
    assert.equal(synced.count, synced.server.count);
    assert.equal(synced.digest, synced.server.digest, 'the cached view after catch-up equals the server pages');
  } catch (err) {
    err.message += `\npage logs:\n${logs.join('\n')}`;
    throw err;
  } finally {
    await page.close();
  }
});
