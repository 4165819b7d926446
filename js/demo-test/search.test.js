// The demo page's search in headless Chromium against the real server: a
// word typed in the sidebar's search box lists the hit with the match
// marked; clicking it opens the session scrolled to that message (older
// than the first page, so the view loads older pages to reach it), the
// message highlighted in view.
//
// Run: cd js && node --test demo-test/search.test.js   (needs Go and /usr/bin/chromium)

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startDemo, watchErrors } from './harness.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let server;

before(async () => {
  server = await startDemo({ speed: '0s' });
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await server?.close();
});

async function api(method, path, body) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  assert.ok(res.ok, `${method} ${path}: ${res.status}`);
  return res.status === 204 ? null : res.json();
}

// post sends a user message and waits for the scripted reply to be done.
async function post(sid, text) {
  await api('POST', `/v1/sessions/${sid}/messages`, { parts: [{ type: 'text', text }] });
  for (let i = 0; i < 500; i++) {
    const page = await api('GET', `/v1/sessions/${sid}/messages?limit=1`);
    const last = page.items.at(-1);
    if (last?.role === 'agent' && last.state === 'done') return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no reply to ${text}`);
}

test('a search hit opens its session scrolled to the message, highlighted', async () => {
  const { session_id: sid } = await api('POST', '/v1/sessions', {});
  await post(sid, 'where does the pangolin sleep?');
  for (let i = 0; i < 30; i++) await post(sid, `filler message ${i}`);
  // Another session, open when the search starts.
  const { session_id: other } = await api('POST', '/v1/sessions', {});
  await post(other, 'nothing to see');

  const context = await server.browser.newContext({ viewport: { width: 1200, height: 820 }, colorScheme: 'light' });
  const page = await context.newPage();
  const errors = watchErrors(page);
  try {
    await page.goto(`${server.url}/#${other}`);
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    await page.getByTestId('search-input').fill('pangolin');
    const hits = page.locator('[data-testid="search-hit"]');
    await hits.first().waitFor();
    // The user's message and the reply quoting it, newest first.
    assert.equal(await hits.count(), 2);
    const user = hits.nth(1);
    assert.equal(await user.getAttribute('data-session-id'), sid);
    assert.equal(await user.getAttribute('data-sequence'), '1');
    assert.equal(await user.locator('mark').first().textContent(), 'pangolin');
    assert.match(await user.textContent(), /where does the pangolin sleep\?/);

    await user.click();
    const hit = page.locator('[data-testid="message"][data-search-hit="true"]');
    await hit.waitFor({ timeout: 20000 });
    assert.equal(await hit.getAttribute('data-sequence'), '1');
    assert.equal(await page.evaluate(() => decodeURIComponent(location.hash.slice(1))), sid);
    // In view: the highlighted message lies within the scroller's box.
    const inView = await page.evaluate(() => {
      const m = document.querySelector('[data-search-hit="true"]').getBoundingClientRect();
      const s = document.getElementById('scroller').getBoundingClientRect();
      return m.bottom > s.top && m.top < s.bottom;
    });
    assert.ok(inView, 'the hit is scrolled into view');
    const shown = await page.locator('[data-testid="message"]').count();
    assert.ok(shown > 50, `older pages were loaded to reach the hit (${shown} messages shown)`);
    assert.deepEqual(errors, [], 'no page errors');
  } finally {
    await context.close();
  }
});

// Presence, in the same server: two browser contexts (two devices) on one
// session see each other as viewers, and one's typing shows in the other.
test('two browsers on a session see each other, and who is typing', async () => {
  const { session_id: sid } = await api('POST', '/v1/sessions', {});
  const a = await server.browser.newContext({ viewport: { width: 1200, height: 820 } });
  const b = await server.browser.newContext({ viewport: { width: 1200, height: 820 } });
  try {
    const pa = await a.newPage();
    const pb = await b.newPage();
    const errors = [watchErrors(pa), watchErrors(pb)];
    for (const p of [pa, pb]) {
      await p.goto(`${server.url}/#${sid}`);
      await p.locator('[data-testid="status"][data-status="live"]').waitFor();
    }
    const avatar = (p) => p.locator('[data-testid="presence-avatar"]');
    await pa.locator('[data-testid="presence-avatar"][data-connections="2"]').waitFor({ timeout: 20000 });
    assert.equal(await avatar(pa).count(), 1);
    await pb.getByTestId('input').pressSequentially('hel');
    await pa.locator('[data-testid="typing"]:not([hidden])').waitFor({ timeout: 20000 });
    assert.match(await pa.getByTestId('typing').textContent(), /another tab is typing/);
    // The one typing does not see itself as news.
    assert.equal(await pb.getByTestId('typing').isHidden(), true);
    await b.close();
    await pa.locator('[data-testid="presence-avatar"][data-connections="1"]').waitFor({ timeout: 20000 });
    // A guest with a write link posts: the page names the message's author
    // (its agentsync.author part), and shows no data card for it.
    const link = await api('POST', `/v1/sessions/${sid}/shares`, { mode: 'write' });
    const res = await fetch(`${server.url}/v1/sessions/${sid}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${link.token}` },
      body: JSON.stringify({ parts: [{ type: 'text', text: 'hello from a guest' }] }),
    });
    assert.equal(res.status, 201);
    const guest = pa.locator('[data-role="user"]', { hasText: 'hello from a guest' });
    await guest.waitFor({ timeout: 20000 });
    assert.equal(await guest.getByTestId('message-author').textContent(), 'Guest');
    assert.equal(await guest.locator('[data-testid="data"]:visible').count(), 0);
    // A session made elsewhere (another tab, over HTTP) appears in the
    // sidebar by itself: the live session list (§4.7); so does one the Go
    // host makes (the terminal client's -p: a new session, a prompt).
    const { session_id: elsewhere } = await api('POST', '/v1/sessions', {});
    await pa.locator(`[data-testid="session-item"][data-session-id="${elsewhere}"]`).waitFor({ timeout: 10000 });
    await api('DELETE', `/v1/sessions/${elsewhere}`);
    await pa.locator(`[data-testid="session-item"][data-session-id="${elsewhere}"]`).waitFor({ state: 'detached', timeout: 10000 });
    const { stdout } = await promisify(execFile)('go', ['run', './cmd/agentsync', '-url', server.url, '-p', 'made by the Go host'], {
      cwd: repo,
      timeout: 5 * 60 * 1000,
    });
    assert.ok(stdout.length > 0, 'the Go host printed no answer');
    await pa.locator('[data-testid="session-item"]', { hasText: 'made by the Go host' }).waitFor({ timeout: 10000 });
    for (const e of errors) assert.deepEqual(e, []);
  } finally {
    await a.close();
    await b.close().catch(() => {});
  }
});
