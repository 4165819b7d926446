// The optional uploads entry point (tus-js-client) against the real
// server: an upload paused mid-way resumes from the server's offset and
// its blob id is the file's SHA-256; a forbidden media type and another
// principal's session are typed refusals.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from './harness/timed.js';
import { startServer } from './harness/syncserver.js';
import { uploadFile } from '../uploads.js';
import { AgentsyncError } from '../errors.js';

let server;

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.stop();
});

async function newSession() {
  const res = await fetch(`${server.url}/v1/sessions`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
  assert.equal(res.status, 201);
  return (await res.json()).session_id;
}

function bytes(n) {
  const b = Buffer.alloc(n);
  let x = 7;
  for (let i = 0; i < n; i++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

test('a paused upload resumes from the server offset and becomes the file', async () => {
  const sessionId = await newSession();
  const file = bytes(3 << 20);
  const progress = [];
  let paused = false;
  let up;
  const resumed = new Promise((resolve) => {
    up = uploadFile(file, {
      baseURL: server.url,
      sessionId,
      filename: 'data.csv',
      mediaType: 'text/csv',
      resume: false,
      chunkSize: 1 << 20,
      onProgress: (sent) => {
        progress.push(sent);
        if (!paused && sent >= 1 << 20) {
          paused = true;
          up.pause().then(() => {
            up.resume();
            resolve();
          });
        }
      },
    });
  });
  await resumed;
  const done = await up.done;
  assert.equal(done.blobId, createHash('sha256').update(file).digest('hex'));
  assert.equal(done.url, `/v1/sessions/${encodeURIComponent(sessionId)}/files/${done.blobId}`);
  assert.ok(paused, 'the upload was paused');
  const res = await fetch(server.url + done.url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/csv');
  assert.ok(Buffer.from(await res.arrayBuffer()).equals(file), 'the file reads back');
});

test('refusals are typed AgentsyncErrors', async () => {
  const sessionId = await newSession();
  const html = uploadFile(Buffer.from('<html></html>'), { baseURL: server.url, sessionId, filename: 'x.html', mediaType: 'text/html', resume: false });
  await assert.rejects(html.done, (e) => e instanceof AgentsyncError && e.code === 'forbidden' && e.status === 403);
  const none = uploadFile(Buffer.from('hi'), { baseURL: server.url, sessionId: 'no-such-session', filename: 'a.txt', mediaType: 'text/plain', resume: false });
  await assert.rejects(none.done, (e) => e instanceof AgentsyncError && e.code === 'not_found');
});
