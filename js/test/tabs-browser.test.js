// One connection for many tabs (tabs.js) in headless Chromium against the
// real server: pages of one browser context (sharing BroadcastChannel and
// Web Locks) open one session with shareTabs; the server counts one
// subscription (its agentsync_subscribers gauge); a message posted streams
// into every page's view equal to the server's; the leader page closes and
// another takes over, still one subscription, and a new post reaches the
// pages left; every page's 'change' events render what its view holds.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { after, before, test } from './harness/timed.js';
import { CHROMIUM_ARGS } from './harness/browser.js';
import { buildServer, stopChild } from './harness/syncserver.js';
import { startStaticServer } from './harness/static-server.js';
import { chromiumPath } from './paths.js';

let dir, child, api, metrics, web, browser;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'agentsync-tabs-'));
  const bin = await buildServer();
  child = spawn(bin, ['-addr', '127.0.0.1:0', '-db', path.join(dir, 't.db'), '-speed', '1ms', '-log-level', 'warn', '-metrics-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('server did not start')), 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const a = /listening on (http:\/\/\S+)/.exec(out);
      const m = /metrics on (http:\/\/\S+)/.exec(out);
      if (a && m) {
        clearTimeout(t);
        api = a[1];
        metrics = m[1];
        resolve();
      }
    });
  });
  web = await startStaticServer({ backend: new URL(api).host });
  browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS });
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await browser?.close();
  await web?.close();
  if (child) await stopChild(child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function subscribers() {
  const text = await (await fetch(metrics)).text();
  const m = /^agentsync_subscribers (\d+)/m.exec(text);
  assert.ok(m, 'the subscribers gauge');
  return Number(m[1]);
}

async function until(pred, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > end) throw new Error(`timed out: ${pred}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function openTab(context, sessionId) {
  const page = await context.newPage();
  const logs = [];
  page.on('pageerror', (e) => logs.push(String(e)));
  await page.goto(web.url);
  await page.evaluate(async ({ sessionId }) => {
    const { connect } = await import('/js/index.js');
    window.__sockets = 0;
    const WS = window.WebSocket;
    window.WebSocket = class extends WS {
      constructor(...a) {
        super(...a);
        window.__sockets++;
      }
    };
    window.__s = await connect({ url: location.origin, sessionId, wasm: '/js/agentsync.wasm', shareTabs: true });
    // A renderer fed by 'change' events only (from the view it started
    // with): each message's part texts, appends applied as appends.
    const textsOf = (m) => m.parts.map((p) => p.text ?? '');
    window.__rendered = new Map(window.__s.view.messages.map((m) => [m.message_id, textsOf(m)]));
    window.__changes = 0;
    window.__s.on('change', (c) => {
      window.__changes++;
      if (c.reset) window.__rendered.clear();
      for (const mc of c.messages) {
        const texts = (window.__rendered.get(mc.message_id) ?? []).slice(0, mc.message.parts.length);
        for (const pc of mc.parts) texts[pc.index] = pc.appended !== undefined ? (texts[pc.index] ?? '') + pc.appended : (pc.part.text ?? '');
        window.__rendered.set(mc.message_id, texts);
      }
    });
  }, { sessionId });
  return { page, logs };
}

// What a page rendered from its 'change' events, beside its view.
const rendered = (page) =>
  page.evaluate(() => ({
    changes: window.__changes,
    fromChanges: window.__s.view.messages.map((m) => (window.__rendered.get(m.message_id) ?? ['(never rendered)']).join('')),
    fromView: window.__s.view.messages.map((m) => m.parts.map((p) => p.text ?? '').join('')),
  }));

const texts = (page) => page.evaluate(() => window.__s.view.messages.map((m) => `${m.role}:${m.state}:${m.parts.map((p) => p.text ?? '').join('')}`));

async function serverTexts(sid) {
  const res = await fetch(`${api}/v1/sessions/${sid}/messages?limit=50`, { headers: { accept: "application/json" } });
  const page = await res.json();
  assert.ok(res.ok, JSON.stringify(page));
  return page.items.map((m) => `${m.role}:${m.state}:${m.parts.map((p) => p.text ?? '').join('')}`);
}

async function postAndWait(sid, text, pages) {
  await fetch(`${api}/v1/sessions/${sid}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ parts: [{ type: 'text', text }] }) });
  await waitEqual(sid, pages);
}

// Until the server's last message is a done reply and every page's view equals the server's.
async function waitEqual(sid, pages) {
  await until(async () => {
    const want = await serverTexts(sid);
    if (!want.at(-1)?.startsWith('agent:done')) return false;
    for (const p of pages) if (JSON.stringify(await texts(p)) !== JSON.stringify(want)) return false;
    return true;
  }, 30000).catch(async (err) => {
    err.message += `\nserver: ${JSON.stringify(await serverTexts(sid))}\n` + (await Promise.all(pages.map((p) => texts(p)))).map((t) => JSON.stringify(t)).join('\n');
    throw err;
  });
}

test('Chromium: ten tabs on one session make one subscription; a new leader takes over', { timeout: 180000 }, async () => {
  const { session_id: sid } = await (await fetch(`${api}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
  const context = await browser.newContext();
  try {
    const tabs = [];
    for (let i = 0; i < 10; i++) tabs.push(await openTab(context, sid));
    const pages = tabs.map((t) => t.page);
    await until(async () => (await subscribers()) === 1);
    const roles = await Promise.all(pages.map((p) => p.evaluate(() => window.__s.leader)));
    assert.equal(roles.filter(Boolean).length, 1, 'one leader');
    // 1 subscription for 10 tabs (the figure of issue 28).
    assert.equal(await subscribers(), 1);

    await postAndWait(sid, 'hello tabs', pages);
    assert.equal(await subscribers(), 1);

    // The leader closes: another tab takes over.
    const li = roles.indexOf(true);
    await pages[li].close();
    pages.splice(li, 1);
    await until(async () => (await Promise.all(pages.map((p) => p.evaluate(() => window.__s.leader)))).filter(Boolean).length === 1);
    await until(async () => (await subscribers()) === 1);
    // A follower's write goes over HTTP and comes back through the new leader.
    await pages[pages.length - 1].evaluate(() => window.__s.send('from a follower'));
    await waitEqual(sid, pages);
    await postAndWait(sid, 'after takeover', pages);
    const all = await texts(pages[0]);
    assert.ok(all.some((t) => t.endsWith('from a follower')));
    assert.equal(await subscribers(), 1);
    // Every tab, leader or follower, renders the same from its 'change'
    // events as its view holds (a follower's come from the leader's).
    for (const p of pages) {
      const r = await rendered(p);
      assert.ok(r.changes > 0, 'change events reached the tab');
      assert.deepEqual(r.fromChanges, r.fromView);
    }
    for (const t of tabs) assert.deepEqual(t.logs, []);
  } finally {
    await context.close();
  }
});
