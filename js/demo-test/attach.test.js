// Attachments in the demo page (issue 29), in headless Chromium against the
// real server: a file dropped on the page (or picked with the paperclip)
// uploads through @agentsync/client/uploads (tus-js-client) with a progress
// bar and a thumbnail; the message holds a file part per file; an image
// shows inline through a signed URL, before and after a reload; another
// file is a download chip.
//
// Run: cd js && node --experimental-websocket --import ./node.js --test demo-test/attach.test.js

import { test, before, after } from '../test/harness/timed.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { startDemo, settled, artifacts, watchErrors } from './harness.js';

let server;

before(async () => {
  server = await startDemo({ speed: '2ms' });
  await mkdir(artifacts, { recursive: true });
}, { timeout: 12 * 60 * 1000 });

after(async () => {
  await server?.close();
});

// png is a w x h RGB image: a gradient, with noise so it does not
// compress to nothing (the upload should take a few progress events).
function png(w, h) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const raw = Buffer.alloc((w * 3 + 1) * h);
  let seed = 7;
  for (let y = 0; y < h; y++) {
    raw[y * (w * 3 + 1)] = 0;
    for (let x = 0; x < w; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const o = y * (w * 3 + 1) + 1 + x * 3;
      raw[o] = (x * 255) / w;
      raw[o + 1] = (y * 255) / h;
      raw[o + 2] = seed >>> 24;
    }
  }
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 0 })), chunk('IEND', Buffer.alloc(0))]);
}

async function withPage(fn, { allow = null } = {}) {
  const context = await server.browser.newContext({ viewport: { width: 1100, height: 820 }, colorScheme: 'light', acceptDownloads: true });
  const page = await context.newPage();
  const errors = watchErrors(page);
  try {
    await fn(page, context);
    assert.deepEqual(allow ? errors.filter((e) => !allow.test(e)) : errors, [], 'no page errors');
  } finally {
    await context.close();
  }
}

async function newSession(page) {
  await page.goto(`${server.url}/`);
  await page.getByTestId('new-session').click();
  await page.waitForFunction(() => location.hash.length > 1 && window.__agentsync?.session);
  await page.locator('[data-testid="status"][data-status="live"]').waitFor();
  return page.evaluate(() => window.__agentsync.sessionId);
}

async function messages(id) {
  const res = await fetch(`${server.url}/v1/sessions/${id}/messages`);
  return (await res.json()).items;
}

// imageShown: the user message's inline image has loaded (a real image, read through its URL).
const imageShown = () => {
  const img = [...document.querySelectorAll('[data-role="user"] [data-testid="file-image"]')].at(-1);
  return !!img && img.complete && img.naturalWidth > 0 && img.src.includes('sig=');
};

test('attach: drop an image, watch it upload, send it; it shows inline, also after a reload', { timeout: 180000 }, async () => {
  const bytes = png(640, 480); // about 900 KB
  const sha = createHash('sha256').update(bytes).digest('hex');
  await withPage(async (page) => {
    const id = await newSession(page);
    // Every progress value the tray shows, as it shows it.
    await page.evaluate(() => {
      window.__progress = [];
      new MutationObserver((recs) => {
        for (const r of recs) if (r.attributeName === 'data-progress') window.__progress.push(Number(r.target.dataset.progress));
      }).observe(document.getElementById('attachments'), { subtree: true, attributes: true, attributeFilter: ['data-progress'] });
    });
    const dt = await page.evaluateHandle((b64) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const t = new DataTransfer();
      t.items.add(new File([data], 'screenshot.png', { type: 'image/png' }));
      return t;
    }, bytes.toString('base64'));
    await page.dispatchEvent('[data-testid="messages"]', 'dragenter', { dataTransfer: dt });
    await page.dispatchEvent('[data-testid="messages"]', 'dragover', { dataTransfer: dt });
    assert.ok(await page.getByTestId('drop-zone').isVisible(), 'the page says where to drop');
    await page.dispatchEvent('[data-testid="messages"]', 'drop', { dataTransfer: dt });
    assert.ok(await page.getByTestId('drop-zone').isHidden());

    const item = page.getByTestId('attachment');
    await item.waitFor();
    assert.equal(await item.getAttribute('data-name'), 'screenshot.png');
    assert.ok(await page.evaluate(() => {
      const img = document.querySelector('[data-testid="attachment-thumb"]');
      return img.complete && img.naturalWidth === 640;
    }) || await page.waitForFunction(() => document.querySelector('[data-testid="attachment-thumb"]')?.naturalWidth === 640), 'a thumbnail of the image');
    await page.locator('[data-testid="attachment"][data-status="done"]').waitFor({ timeout: 60000 });
    assert.equal(await page.getByTestId('attachment-progress').textContent(), '100%');
    const seen = await page.evaluate(() => window.__progress);
    assert.equal(seen.at(-1), 100, `progress reached 100%: ${seen}`);
    assert.deepEqual(seen, [...seen].sort((a, b) => a - b), 'progress only grows');
    await page.screenshot({ path: path.join(artifacts, 'attach-tray.png') });

    await page.getByTestId('input').fill('What is in this picture?');
    await page.getByTestId('input').press('Enter');
    await page.waitForFunction(imageShown, null, { timeout: 30000 });
    await page.waitForFunction(settled, null, { timeout: 30000 });
    assert.ok(await page.getByTestId('attachments').isHidden(), 'the tray empties once sent');

    // The server's message: the text, then the file part naming the blob.
    const user = (await messages(id)).filter((m) => m.role === 'user').at(-1);
    assert.deepEqual(user.parts.map((p) => p.type), ['text', 'file']);
    const file = user.parts[1];
    assert.equal(file.media_type, 'image/png');
    assert.equal(file.filename, 'screenshot.png');
    assert.equal(file.url, `/v1/sessions/${id}/files/${sha}`, 'the blob is the bytes dropped');
    const got = Buffer.from(await (await fetch(`${server.url}${file.url}`)).arrayBuffer());
    assert.ok(got.equals(bytes), 'the server serves the same bytes');
    await page.screenshot({ path: path.join(artifacts, 'attach-sent.png') });

    await page.reload();
    await page.locator('[data-testid="status"][data-status="live"]').waitFor();
    await page.waitForFunction(imageShown, null, { timeout: 30000 });
    assert.equal(await page.locator('[data-role="user"] [data-testid="file-link"] .file-name').last().textContent(), 'screenshot.png');
  });
});

test('attach: a text file picked with the paperclip is a download chip', { timeout: 120000 }, async () => {
  await withPage(async (page) => {
    const id = await newSession(page);
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByTestId('attach').click()]);
    await chooser.setFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from a file\n') });
    await page.locator('[data-testid="attachment"][data-status="done"]').waitFor({ timeout: 60000 });
    assert.equal(await page.locator('[data-testid="attachment-thumb"]').count(), 0, 'no thumbnail for text');
    await page.getByTestId('send').click();
    const chip = page.locator('[data-role="user"] [data-testid="file-link"]').last();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-role="user"] [data-testid="file-link"]')].at(-1)?.href.includes('download=1'), null, { timeout: 30000 });
    assert.equal(await page.locator('[data-role="user"] [data-testid="file-image"]').count(), 0);
    const [download] = await Promise.all([page.waitForEvent('download'), chip.click()]);
    assert.equal(download.suggestedFilename(), 'notes.txt');
    const user = (await messages(id)).filter((m) => m.role === 'user').at(-1);
    assert.deepEqual(user.parts.map((p) => [p.type, p.filename]), [['file', 'notes.txt']]);
    await page.waitForFunction(settled, null, { timeout: 30000 });
  });
});

// cuttingProxy forwards TCP to the server and, once armed, drops every
// connection it carries when cutAfter bytes more went up: a network cut in
// the middle of an upload's body.
async function cuttingProxy(target) {
  const { hostname, port } = new URL(target);
  const sockets = new Set();
  let armed = null; // bytes still to pass before the cut
  let cuts = 0;
  const srv = net.createServer((client) => {
    const up = net.connect(Number(port), hostname);
    sockets.add(client).add(up);
    const done = () => { sockets.delete(client); sockets.delete(up); client.destroy(); up.destroy(); };
    client.on('data', (d) => {
      if (armed !== null && (armed -= d.length) <= 0) {
        armed = null;
        cuts++;
        for (const s of sockets) s.destroy();
        return;
      }
      up.write(d);
    });
    up.on('data', (d) => client.write(d));
    client.on('close', done).on('error', done);
    up.on('close', done).on('error', done);
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    cutAfter(bytes) { armed = bytes; },
    get cuts() { return cuts; },
    close: () => new Promise((r) => { for (const s of sockets) s.destroy(); srv.close(r); }),
  };
}

test('attach: the connection drops mid-upload; the upload resumes, finishes and renders', { timeout: 180000 }, async () => {
  const bytes = png(1400, 1000); // about 4 MB
  const sha = createHash('sha256').update(bytes).digest('hex');
  const proxy = await cuttingProxy(server.url);
  try {
    await withPage(async (page) => {
      const methods = [];
      page.on('request', (r) => {
        if (r.method() === 'PATCH' || r.method() === 'HEAD') methods.push(r.method());
      });
      await page.goto(`${proxy.url}/`);
      await page.getByTestId('new-session').click();
      await page.waitForFunction(() => location.hash.length > 1 && window.__agentsync?.session);
      await page.locator('[data-testid="status"][data-status="live"]').waitFor();
      const id = await page.evaluate(() => window.__agentsync.sessionId);
      const dt = await page.evaluateHandle((b64) => {
        const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const t = new DataTransfer();
        t.items.add(new File([data], 'big.png', { type: 'image/png' }));
        return t;
      }, bytes.toString('base64'));
      // The cut comes 1.5 MB into the upload's body.
      proxy.cutAfter(1.5e6);
      await page.dispatchEvent('[data-testid="messages"]', 'drop', { dataTransfer: dt });
      // Done, or failed: a failure says why (its label's title is the error).
      await page.locator('[data-testid="attachment"][data-status="done"], [data-testid="attachment"][data-status="error"]').waitFor({ timeout: 90000 });
      const shown = await page.$eval('[data-testid="attachment"]', (a) => ({ status: a.dataset.status, progress: a.dataset.progress, error: a.querySelector('[data-testid="attachment-progress"]')?.title }));
      assert.equal(shown.status, 'done', `the upload: ${JSON.stringify(shown)}; cuts ${proxy.cuts}; requests ${methods}`);
      assert.equal(proxy.cuts, 1, 'the upload was cut');
      // The cut PATCH, then the client asked where it stopped and went on.
      assert.ok(methods.filter((m) => m === 'PATCH').length >= 2 && methods.includes('HEAD'), `requests: ${methods}`);
      await page.locator('[data-testid="status"][data-status="live"]').waitFor({ timeout: 30000 });
      await page.getByTestId('input').fill('and this one?');
      await page.getByTestId('input').press('Enter');
      await page.waitForFunction(imageShown, null, { timeout: 30000 });
      const user = (await messages(id)).filter((m) => m.role === 'user').at(-1);
      assert.equal(user.parts.find((p) => p.type === 'file').url, `/v1/sessions/${id}/files/${sha}`, 'the blob is every byte dropped, once');
      await page.waitForFunction(settled, null, { timeout: 30000 });
      // A PATCH retried while the server still finished the cut one is
      // refused (409: the offset moved) and tus asks again: the browser
      // logs the refusal.
    }, { allow: /status of 409 \(Conflict\)/ });
  } finally {
    await proxy.close();
  }
});
