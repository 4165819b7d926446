// The package as a new user gets it: `npm pack`, the tarball installed into
// the Vite + React + TypeScript app in examples/vite-react (its own
// lockfile), `tsc --strict`, `vite build`, the build served from another
// origin than the reference server (started with -origins for it), and the
// app driven in headless Chromium: create a session, answer an approval,
// stream a long answer (while it streams, only its own row may render
// again: useSession + memoized rows), stream another with the connection
// dropped in the middle, and compare the page with the server's snapshot.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AgentsyncError, loadModule } from '../node.js';
import { openPage } from './harness/browser.js';
import { serveDir } from './harness/dir-server.js';
import { startServer } from './harness/syncserver.js';
import { jsDir, repoDir } from './paths.js';

const exec = promisify(execFile);
const appDir = path.join(repoDir, 'examples', 'vite-react');
const LONG_CHARS = 50000; // 2,000 deltas of 25: 4 s at the server's 2 ms a delta

let tmp;
let dist;

// Runs a command, failing with its output.
async function run(cmd, args, cwd) {
  try {
    return await exec(cmd, args, { cwd, maxBuffer: 1 << 24, timeout: 5 * 60 * 1000 });
  } catch (err) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
  }
}

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'agentsync-vite-'));
  await run('npm', ['pack', '--pack-destination', tmp], jsDir);
  const tarball = path.join(tmp, (await readdir(tmp)).find((f) => f.endsWith('.tgz')));
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', tarball], appDir);
  dist = path.join(tmp, 'dist');
  await run('npx', ['tsc', '--noEmit', '-p', '.'], appDir);
  await run('npx', ['vite', 'build', '--outDir', dist, '--emptyOutDir'], appDir);
}, { timeout: 10 * 60 * 1000 });

after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test('the tarball holds the module, and the build ships one copy and no node: import', async () => {
  const { stdout } = await run('tar', ['-tzf', path.join(tmp, (await readdir(tmp)).find((f) => f.endsWith('.tgz')))], tmp);
  assert.match(stdout, /^package\/agentsync\.wasm$/m);
  const assets = await readdir(path.join(dist, 'assets'));
  assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 1, `assets: ${assets}`);
  for (const f of assets.filter((f) => f.endsWith('.js'))) {
    assert.doesNotMatch(await readFile(path.join(dist, 'assets', f), 'utf8'), /["']node:/, `${f} imports node:`);
  }
});

test('in Node the installed package loads its module without options', async () => {
  const script = "import { Core } from '@agentsync/client'; const core = await Core.load(); console.log(core.view().messages.length);";
  const { stdout } = await run('node', ['--input-type=module', '-e', script], appDir);
  assert.equal(stdout.trim(), '0');
});

test('a module URL that answers HTML fails with an error naming the URL and what came back', async () => {
  const app = await serveDir(dist);
  try {
    const url = `${app.url}/index.html`;
    await assert.rejects(loadModule(url), (err) => {
      assert.ok(err instanceof AgentsyncError, String(err));
      assert.equal(err.code, 'bad_request');
      assert.ok(err.message.includes(url), err.message);
      assert.match(err.message, /text\/html/);
      assert.match(err.message, /3c 21 64 6f/); // "<!do"
      return true;
    });
  } finally {
    await app.close();
  }
});

// What the page shows, message by message, from the DOM only.
function pageMessages(page) {
  return page.$$eval('#messages > li', (rows) =>
    rows.map((row) => ({
      message_id: row.dataset.messageId,
      role: row.dataset.role,
      state: row.dataset.state,
      parts: [...row.querySelectorAll('.part')].map((p) => ({
        type: p.dataset.type,
        state: p.dataset.state,
        text: p.dataset.type === 'text' || p.dataset.type === 'reasoning' ? p.textContent : '',
      })),
    })),
  );
}

// The same shape from the server's snapshot.
async function serverMessages(url, sessionId) {
  const res = await fetch(`${url}/v1/sessions/${sessionId}/messages?limit=200`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200);
  const page = await res.json();
  return page.items.map((m) => ({
    message_id: m.message_id,
    role: m.role,
    state: m.state ?? '',
    parts: m.parts.map((p) => ({
      type: p.type,
      state: (p.type === 'interaction' ? p.status : p.state) ?? '',
      text: p.type === 'text' || p.type === 'reasoning' ? p.text : '',
    })),
  }));
}

const streamingRow = '#messages > li[data-state="streaming"]';

test('Vite + React app on another origin: approval, a long stream across a dropped connection, renders per row', { timeout: 5 * 60 * 1000 }, async (t) => {
  const app = await serveDir(dist);
  const server = await startServer({ speed: '2ms', origins: app.url });
  const { page, logs, close } = await openPage(`${app.url}/?server=${encodeURIComponent(server.url)}`);
  t.after(async () => {
    await close();
    await server.stop();
    await app.close();
  });
  try {
    await page.click('#new-session');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'live');

    // An approval: the button answers it, the turn goes on to its last words.
    await page.fill('#draft', 'scenario:approval');
    await page.click('#send');
    await page.click('[data-approve]');
    await page.waitForFunction(() => [...document.querySelectorAll('#messages pre')].some((p) => p.textContent.startsWith('Done: the email was sent')));

    // A long answer. While it streams, the other rows must not render.
    await page.fill('#draft', 'scenario:long chars=20000 delta=20');
    await page.click('#send');
    await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent.length ?? 0) > 500, streamingRow);
    const streamingId = await page.$eval(streamingRow, (row) => row.dataset.messageId);
    const row = `#messages > li[data-message-id="${streamingId}"]`;
    const before = await page.evaluate(() => ({ ...window.rowRenders }));
    await page.waitForFunction((sel) => {
      const r = document.querySelector(sel);
      return r.dataset.state === 'done' || r.textContent.length > 5000;
    }, row);
    const during = await page.evaluate(() => ({ ...window.rowRenders }));
    assert.ok(during[streamingId] > before[streamingId], `the streaming row rendered again (${before[streamingId]} → ${during[streamingId]})`);
    for (const [id, n] of Object.entries(before)) {
      if (id !== streamingId) assert.equal(during[id], n, `row ${id} rendered while another message streamed`);
    }
    await page.waitForFunction((sel) => document.querySelector(sel).dataset.state === 'done', row, { timeout: 120000 });

    // Another, longer answer with the connection cut mid-stream (checked
    // and cut in one step): the view heals from the server.
    await page.fill('#draft', `scenario:long chars=${LONG_CHARS} delta=25`);
    await page.click('#send');
    await page.waitForFunction((sel) => (document.querySelector(sel)?.textContent.length ?? 0) > 500, streamingRow);
    const cutAt = await page.evaluate((sel) => {
      const r = document.querySelector(sel);
      return r && window.agentsyncSession.dropConnection() ? r.textContent.length : -1;
    }, streamingRow);
    assert.ok(cutAt > 0, 'the connection was cut while the answer streamed');
    await page.waitForFunction(
      (sel) => document.querySelector('#status')?.textContent === 'live' && !document.querySelector(sel),
      streamingRow,
      { timeout: 120000 },
    );

    const sessionId = await page.$eval('section', (s) => s.dataset.sessionId);
    const shown = await pageMessages(page);
    const want = await serverMessages(server.url, sessionId);
    const longest = Math.max(...shown.flatMap((m) => m.parts.map((p) => [...p.text].length)));
    assert.equal(longest, LONG_CHARS, 'the long answer arrived whole');
    assert.deepEqual(shown, want, 'the page shows the server snapshot');
    assert.ok(want.some((m) => m.parts.some((p) => p.type === 'interaction' && p.state === 'resolved')), 'the approval is resolved');
  } catch (err) {
    err.message += `\npage logs:\n${logs.join('\n')}\nserver:\n${server.stderr()}`;
    throw err;
  }
});
