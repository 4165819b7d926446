// Search through the JS host against the real server on loopback:
// search() finds the caller's messages with an HTML-safe snippet and pages
// with its cursor, a session opens at a hit (reveal() loads older pages
// until the view holds it), and messages({around_sequence}) reads the page
// around it with cursors on both sides.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, connect, createSession, search } from '../index.js';
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

const idle = (n) => (v) => v.status === 'live' && v.messages.length === n && v.messages.every((m) => m.role === 'user' || m.state === 'done');

test('search finds a message and the session opens at it', async (t) => {
  const writer = await createSession(server.url, opts());
  t.after(() => writer.close());
  const texts = ['the <axolotl> & friends', 'filler 1', 'filler 2', 'filler 3', 'filler 4', 'filler 5'];
  for (const [i, text] of texts.entries()) {
    await writer.send(text);
    await writer.waitFor(idle(2 * (i + 1)));
  }
  // The user's message and the scripted reply quoting it, newest first.
  const res = await search(server.url, 'AXOLOTL');
  assert.equal(res.items.length, 2);
  assert.equal(res.next_cursor, undefined);
  const hit = res.items[1];
  assert.equal(hit.session_id, writer.sessionId);
  assert.equal(hit.role, 'user');
  assert.equal(hit.sequence, 1);
  assert.equal(hit.snippet, 'the &lt;<mark>axolotl</mark>&gt; &amp; friends');

  // Pages of one, by the cursor.
  const first = await search(server.url, 'filler', { limit: 1 });
  assert.equal(first.items.length, 1);
  assert.ok(first.next_cursor);
  const second = await search(server.url, 'filler', { limit: 1, cursor: first.next_cursor });
  assert.ok(second.items[0].sequence < first.items[0].sequence, 'newest first');

  await assert.rejects(search(server.url, '  '), (err) => err instanceof AgentsyncError && err.code === 'bad_request');
  await assert.rejects(search(server.url, 'x', { cursor: '!' }), (err) => err instanceof AgentsyncError && err.code === 'bad_request');

  // Open at the hit: a view of 2 messages per page loads older pages
  // until it holds sequence 1.
  const reader = await connect({ ...opts(), url: server.url, sessionId: hit.session_id, pageLimit: 2 });
  t.after(() => reader.close());
  assert.ok(reader.view.messages[0].sequence > 1, 'the first page is the newest');
  const m = await reader.reveal(hit.sequence);
  assert.equal(m.message_id, hit.message_id);
  assert.equal(reader.view.messages[0].message_id, hit.message_id);

  // The page around a hit, exact at the first message, with its cursors.
  const around = await reader.messages({ around_sequence: 1, limit: 3 });
  assert.deepEqual(around.items.map((x) => x.sequence), [1, 2, 3]);
  assert.equal(around.has_more, false);
  assert.equal(around.has_newer, true);
  const mid = await reader.messages({ around_sequence: 6, limit: 4 });
  assert.deepEqual(mid.items.map((x) => x.sequence), [4, 5, 6, 7]);
  const newer = await reader.messages({ after_sequence: mid.next_after_sequence, limit: 200 });
  assert.deepEqual(newer.items.map((x) => x.sequence), [8, 9, 10, 11, 12]);
  assert.equal(newer.has_newer, false);
  const older = await reader.messages({ before_sequence: mid.next_before_sequence, limit: 200 });
  assert.deepEqual(older.items.map((x) => x.sequence), [1, 2, 3]);
});
