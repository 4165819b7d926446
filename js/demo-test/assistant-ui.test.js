// @agentsync/client/assistant-ui as a new user gets it: the packed package
// installed into a Vite + React app (js/demo-test/assistant-ui-app, its own
// lockfile, the real @assistant-ui/react from npm), type-checked, built, served from
// another origin than the reference server, and driven in headless
// Chromium. assistant-ui's Thread (its primitives) on a real session:
// streaming text shows as it streams, an approval card is approved from
// the tool UI, a user message is edited and a reply regenerated (forks of
// the conversation tree), the BranchPicker switches between versions, and
// an image attached in the composer is sent as a file part.
// After each step the thread's text equals the server's path (GET
// /v1/sessions/{id}/messages of the branch shown).

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openPage } from '../test/harness/browser.js';
import { serveDir } from '../test/harness/dir-server.js';
import { startServer } from '../test/harness/syncserver.js';
import { jsDir } from '../test/paths.js';

const exec = promisify(execFile);
const appDir = path.join(jsDir, 'demo-test', 'assistant-ui-app');

let tmp;
let dist;

async function run(cmd, args, cwd) {
  try {
    return await exec(cmd, args, { cwd, maxBuffer: 1 << 24, timeout: 5 * 60 * 1000 });
  } catch (err) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'agentsync-aui-'));
  await run('npm', ['pack', '--pack-destination', tmp], jsDir);
  const tarball = path.join(tmp, (await readdir(tmp)).find((f) => f.endsWith('.tgz')));
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', tarball], appDir);
  dist = path.join(tmp, 'dist');
  // The app is TypeScript (strict, the libraries' declarations checked):
  // assistant-ui.d.ts must fit the real @assistant-ui/react.
  await run('npx', ['tsc', '--noEmit', '-p', '.'], appDir);
  await run('npx', ['vite', 'build', '--outDir', dist, '--emptyOutDir'], appDir);
}, { timeout: 10 * 60 * 1000 });

after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

// The thread as the page shows it, from the DOM only: each message's role,
// its text and its tools.
function shownThread(page) {
  return page.$$eval('#messages .msg', (rows) =>
    rows.map((row) => ({
      role: row.dataset.role,
      text: [...row.querySelectorAll('.part[data-type="text"]')].map((p) => p.textContent).join(''),
      tools: [...row.querySelectorAll('.part[data-type="tool"]')].map((p) => p.dataset.tool),
      images: [...row.querySelectorAll('.part[data-type="image"]')].map((p) => p.getAttribute('src')),
    })),
  );
}

// The same from the server's path of sessionId; done: whether its last message is done.
async function serverThread(url, sessionId) {
  const res = await fetch(`${url}/v1/sessions/${sessionId}/messages?limit=200`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200);
  const page = await res.json();
  const items = page.items.filter((m) => m.visibility !== 'internal');
  return {
    done: items.at(-1)?.role === 'agent' && items.at(-1).state === 'done',
    thread: items.map((m) => ({
      role: m.role === 'user' ? 'user' : 'assistant',
      text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join(''),
      tools: m.parts.filter((p) => p.type === 'tool').map((p) => p.tool_name),
      images: m.parts.filter((p) => p.type === 'file' && p.media_type.startsWith('image/')).map((p) => p.url),
    })),
  };
}

const currentSession = (page) => page.evaluate(() => window.agentsyncSession?.sessionId);

// Waits until the server's path of the branch shown is done and the page
// shows it, then asserts they are equal. Returns the thread.
async function expectServerPath(page, url, what) {
  const end = Date.now() + 60000;
  let shown;
  let want;
  let sessionId;
  while (Date.now() < end) {
    sessionId = await currentSession(page);
    const s = await serverThread(url, sessionId);
    want = s.thread;
    shown = await shownThread(page);
    if (s.done && JSON.stringify(shown) === JSON.stringify(want)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(shown, want, `${what}: the thread shows the server's path of ${sessionId}`);
  if (process.env.AUI_TRACE) console.error(new Date().toISOString(), what);
  return { thread: shown, sessionId };
}

// The BranchPicker of the i-th message: "n/count".
const pickerOf = (page, i) =>
  page.$$eval('#messages .msg', (rows, i) => {
    const r = rows[i];
    const n = r?.querySelector('.branch-number')?.textContent;
    const c = r?.querySelector('.branch-count')?.textContent;
    return n && c ? `${n}/${c}` : '';
  }, i);

async function waitPicker(page, i, want) {
  await page.waitForFunction(
    ([i, want]) => {
      const r = document.querySelectorAll('#messages .msg')[i];
      const n = r?.querySelector('.branch-number')?.textContent;
      const c = r?.querySelector('.branch-count')?.textContent;
      return `${n}/${c}` === want;
    },
    [i, want],
    { timeout: 60000 },
  );
}

async function send(page, text) {
  await page.fill('#draft', text);
  await page.click('#send');
}

test('assistant-ui Thread on a session: streaming, an approval card, edit, regenerate, BranchPicker, an attached image', { timeout: 5 * 60 * 1000 }, async (t) => {
  const app = await serveDir(dist);
  const server = await startServer({ speed: '2ms', origins: app.url });
  const res = await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 201);
  const root = (await res.json()).session_id;
  const { page, logs, close } = await openPage(`${app.url}/?server=${encodeURIComponent(server.url)}&session=${root}`);
  t.after(async () => {
    await close();
    await server.stop();
    await app.close();
  });
  try {
    await page.waitForFunction(() => window.agentsyncSession?.status === 'live', null, { timeout: 60000 });

    // Streaming: the page records every length the reply's text had.
    await page.evaluate(() => {
      window.lengths = new Set();
      new MutationObserver(() => {
        const rows = document.querySelectorAll('#messages .msg[data-role="assistant"]');
        const last = rows[rows.length - 1];
        if (last) window.lengths.add([...last.querySelectorAll('.part[data-type="text"]')].map((p) => p.textContent).join('').length);
      }).observe(document.getElementById('messages'), { subtree: true, childList: true, characterData: true });
    });
    await send(page, 'scenario:text chars=3000 delta=4');
    const first = await expectServerPath(page, server.url, 'a streamed reply');
    assert.equal(first.sessionId, root);
    const full = [...first.thread[1].text].length;
    const lengths = await page.evaluate(() => [...window.lengths]);
    assert.ok(lengths.some((n) => n > 0 && n < first.thread[1].text.length), `the reply showed while it streamed (lengths seen: ${lengths.slice(0, 20)}; whole: ${full})`);

    // An approval card, approved from the tool UI.
    await send(page, 'scenario:approval');
    await page.waitForSelector('[data-approve]', { timeout: 60000 });
    assert.equal(await page.$eval('[data-tool="send_email"]', (e) => e.dataset.approval), 'pending');
    await page.click('[data-approve]');
    await page.waitForFunction(() => document.querySelector('[data-tool="send_email"]')?.dataset.approval === 'approved', null, { timeout: 60000 });
    const approved = await expectServerPath(page, server.url, 'after the approval');
    assert.match(approved.thread[3].text, /Done: the email was sent/);
    assert.deepEqual(approved.thread[3].tools, ['send_email']);

    // The edit composer: the second user message (sequence 3) gets new
    // words; the edit is a fork the runtime follows.
    const userRows = await page.$$('#messages .msg[data-role="user"]');
    await (await userRows[1].$('.edit')).click();
    await page.waitForSelector('.edit-input', { timeout: 30000 });
    await page.fill('.edit-input', 'scenario:text chars=200');
    await page.click('.edit-send');
    await page.waitForFunction((root) => window.agentsyncSession?.sessionId !== root, root, { timeout: 60000 });
    const edited = await expectServerPath(page, server.url, 'after the edit');
    assert.notEqual(edited.sessionId, root);
    assert.equal(edited.thread[2].text, 'scenario:text chars=200');
    await waitPicker(page, 2, '2/2');

    // Regenerate the reply to the edited message: another fork.
    const rows = await page.$$('#messages .msg');
    await (await rows[3].$('.reload')).click();
    await page.waitForFunction((id) => window.agentsyncSession?.sessionId !== id, edited.sessionId, { timeout: 60000 });
    const regenerated = await expectServerPath(page, server.url, 'after the regeneration');
    assert.notEqual(regenerated.thread[3].text, edited.thread[3].text, 'the regenerated reply differs');
    await waitPicker(page, 3, '2/2');
    await waitPicker(page, 2, '2/2');

    // BranchPicker: the reply's first version, then the message's first
    // version (the approval), then forward again.
    await (await (await page.$$('#messages .msg'))[3].$('.prev')).click();
    await page.waitForFunction((id) => window.agentsyncSession?.sessionId === id, edited.sessionId, { timeout: 60000 });
    const back = await expectServerPath(page, server.url, 'the first version of the reply');
    assert.deepEqual(back.thread, edited.thread);
    await waitPicker(page, 3, '1/2');

    await (await (await page.$$('#messages .msg'))[2].$('.prev')).click();
    await page.waitForFunction((id) => window.agentsyncSession?.sessionId === id, root, { timeout: 60000 });
    const original = await expectServerPath(page, server.url, 'the first version of the message');
    assert.deepEqual(original.thread, approved.thread);
    await waitPicker(page, 2, '1/2');
    assert.equal(await pickerOf(page, 3), '1/1', 'the original reply has one version');

    await (await (await page.$$('#messages .msg'))[2].$('.next')).click();
    await page.waitForFunction((id) => window.agentsyncSession?.sessionId !== id, root, { timeout: 60000 });
    const forward = await expectServerPath(page, server.url, 'the second version of the message');
    assert.ok([edited.sessionId, regenerated.sessionId].includes(forward.sessionId), `switched to ${forward.sessionId}`);
    await waitPicker(page, 2, '2/2');

    // An image attached in the composer: a file part of the user message.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser', { timeout: 30000 }), page.click('#attach')]);
    await chooser.setFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
    await send(page, 'what is in this picture?');
    const attached = await expectServerPath(page, server.url, 'a message with an image');
    const asked = attached.thread.at(-2);
    assert.equal(asked.text, 'what is in this picture?');
    assert.deepEqual(asked.images, [`data:image/png;base64,${png.toString('base64')}`]);
  } catch (err) {
    err.message += `\npage logs:\n${logs.join('\n')}\nserver:\n${server.stderr()}`;
    throw err;
  }
});

// ------------------------------------------------ usechat.html: useChat
// @ai-sdk/react's useChat on AgentsyncChatTransport, the same build.

const shownChat = (page) =>
  page.$$eval('#messages .msg', (rows) => rows.map((r) => ({ role: r.dataset.role, text: [...r.querySelectorAll('.part[data-type="text"]')].map((p) => p.textContent).join('') })));

async function newSession(url) {
  const res = await fetch(`${url}/v1/sessions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 201);
  return (await res.json()).session_id;
}

async function openChat(app, server, sessionId) {
  const opened = await openPage(`${app.url}/usechat.html?server=${encodeURIComponent(server.url)}&session=${sessionId}`);
  await opened.page.waitForSelector('#draft', { timeout: 60000 });
  return opened;
}

async function waitServerDone(url, sessionId, count) {
  const end = Date.now() + 120000;
  let s;
  // The harness's server has no rate limit: a short poll, checked at once.
  for (; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) {
    const res = await fetch(`${url}/v1/sessions/${sessionId}/messages?limit=1`, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200, `read the newest message of ${sessionId}`);
    const last = (await res.json()).items.at(-1);
    if (last?.role !== 'agent' || last.state !== 'done') continue;
    s = await serverThread(url, sessionId);
    if (s.done && (count === undefined || s.thread.length === count)) return s;
  }
  assert.fail(`the server's path of ${sessionId} is not done: ${JSON.stringify(s?.thread.map((m) => m.text.length))}`);
}

async function waitShown(page, want, what) {
  const end = Date.now() + 60000;
  let shown;
  while (Date.now() < end) {
    shown = await shownChat(page);
    if (JSON.stringify(shown) === JSON.stringify(want)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(shown, want, what);
}

const serverRows = (s) => s.thread.map((m) => ({ role: m.role, text: m.text }));

test('useChat on AgentsyncChatTransport: streaming, stop, regenerate, a reload mid-stream, a 200-message chat posts only the new message', { timeout: 5 * 60 * 1000 }, async (t) => {
  const app = await serveDir(dist);
  const server = await startServer({ speed: '2ms', origins: app.url });
  t.after(async () => {
    await server.stop();
    await app.close();
  });
  // Streaming.
  const sid = await newSession(server.url);
  const { page, logs, close } = await openChat(app, server, sid);
  t.after(close);
  try {
    await page.evaluate(() => {
      window.lengths = new Set();
      new MutationObserver(() => {
        const last = [...document.querySelectorAll('#messages .msg[data-role="assistant"]')].at(-1);
        if (last) window.lengths.add(last.textContent.length);
      }).observe(document.getElementById('messages'), { subtree: true, childList: true, characterData: true });
    });
    await page.fill('#draft', 'scenario:text chars=3000 delta=4');
    await page.click('#send');
    const s = await waitServerDone(server.url, sid, 2);
    await waitShown(page, serverRows(s), 'the streamed reply equals the server');
    const lengths = await page.evaluate(() => [...window.lengths]);
    assert.ok(lengths.some((n) => n > 0 && n < s.thread[1].text.length), `the reply showed while it streamed (${lengths.slice(0, 10)})`);

    // stop(): the server's message ends stopped.
    // 40,000 characters stream for 3.2 s: long enough to stop mid-answer,
    // short enough for regenerate() below to stream its new reply whole.
    const stopChars = 40000;
    await page.fill('#draft', `scenario:long chars=${stopChars} delta=25`);
    await page.click('#send');
    await page.waitForFunction(() => ([...document.querySelectorAll('#messages .msg')].at(-1)?.textContent.length ?? 0) > 500 && document.querySelectorAll('#messages .msg').length === 4, null, { timeout: 60000 });
    // The button moves while the text grows: a DOM click.
    await page.$eval('#stop', (b) => b.click());
    const stopped = await (async () => {
      const end = Date.now() + 60000;
      while (Date.now() < end) {
        const r = await fetch(`${server.url}/v1/sessions/${sid}/messages?limit=10`, { headers: { Accept: 'application/json' } });
        const last = (await r.json()).items.at(-1);
        if (last.state !== 'streaming') return last;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.fail('the turn did not stop');
    })();
    assert.ok(stopped.parts.some((p) => p.type === 'action' && p.action_type === 'stop'), `the message ended stopped: ${JSON.stringify(stopped.parts.map((p) => p.type))}`);
    const stoppedText = stopped.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert.ok(stoppedText.length < stopChars, `stopped early (${stoppedText.length} of ${stopChars})`);
    t.diagnostic(`stopped at ${stoppedText.length} of ${stopChars} characters`);

    // regenerate(): the stopped reply again, as a branch; the page follows
    // the fork, and the server lists the two versions.
    const root = await page.evaluate(() => window.agentsyncSession.sessionId);
    await page.$eval('#regenerate', (b) => b.click());
    await page.waitForFunction((id) => window.agentsyncSession && window.agentsyncSession.sessionId !== id, root, { timeout: 60000 });
    const fork = await page.evaluate(() => window.agentsyncSession.sessionId);
    const regenerated = await waitServerDone(server.url, fork, 4);
    await waitShown(page, serverRows(regenerated), 'after regenerate() the chat shows the fork\'s path, the new reply whole');
    const alts = await (await fetch(`${server.url}/v1/sessions/${fork}/alternatives`, { headers: { Accept: 'application/json' } })).json();
    assert.deepEqual(alts.items.find((a) => a.sequence === 4), { sequence: 4, count: 2, index: 1 }, JSON.stringify(alts));
  } catch (err) {
    err.message += `\npage logs:\n${logs.join('\n')}\nserver:\n${server.stderr()}`;
    throw err;
  }

  // A reload mid-stream, on a session of its own: the history shows, and
  // the reply resumes to exactly the server's text (no character twice).
  const rl = await newSession(server.url);
  const reloading = await openChat(app, server, rl);
  t.after(reloading.close);
  await reloading.page.fill('#draft', 'scenario:long chars=20000 delta=16');
  await reloading.page.click('#send');
  await reloading.page.waitForFunction(() => {
    const rows = document.querySelectorAll('#messages .msg');
    return rows.length === 2 && rows[1].textContent.length > 1000;
  }, null, { timeout: 60000 });
  await reloading.page.reload();
  await reloading.page.waitForSelector('#draft', { timeout: 60000 });
  const reloaded = await waitServerDone(server.url, rl, 2);
  assert.equal([...reloaded.thread[1].text].length, 20000);
  await waitShown(reloading.page, serverRows(reloaded), 'after a reload mid-stream the chat equals the server');

  // 200 messages seeded over HTTP, then one message from the page.
  const big = await newSession(server.url);
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${server.url}/v1/sessions/${big}/messages`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ parts: [{ type: 'text', text: `scenario:text chars=20 n=${i}` }] }) });
    assert.ok(r.status < 300, `seed ${i}: ${r.status}`);
    await waitServerDone(server.url, big, 2 * (i + 1));
  }
  const chat = await openChat(app, server, big);
  t.after(chat.close);
  await chat.page.waitForFunction(() => document.querySelectorAll('#messages .msg').length === 200, null, { timeout: 60000 });
  const posts = [];
  chat.page.on('request', (r) => {
    if (r.method() === 'POST') posts.push({ url: r.url(), body: r.postData() });
  });
  await chat.page.fill('#draft', 'scenario:text chars=50');
  await chat.page.click('#send');
  // serverThread reads the newest 200: the 202-message path's last 200.
  const after = await waitServerDone(server.url, big, 200);
  assert.equal(after.thread.at(-2).text, 'scenario:text chars=50');
  await chat.page.waitForFunction(() => document.querySelectorAll('#messages .msg').length === 202 && document.querySelector('#messages')?.dataset.status === 'ready', null, { timeout: 60000 });
  assert.deepEqual((await shownChat(chat.page)).slice(-200), serverRows(after), 'the 202-message chat equals the server');
  assert.equal(posts.length, 1, JSON.stringify(posts));
  assert.match(posts[0].url, /\/v1\/sessions\/[^/]+\/messages$/);
  assert.deepEqual(JSON.parse(posts[0].body), { parts: [{ type: 'text', text: 'scenario:text chars=50' }] });
});
