// createSession loads the module before it creates anything on the server,
// so a page that cannot load it leaves no empty session behind; and
// listSessions lists what createSession made.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { AgentsyncError, createSession, listSessions } from '../node.js';
import { startServer } from './harness/syncserver.js';

let server;
before(async () => {
  server = await startServer();
}, { timeout: 10 * 60 * 1000 });
after(() => server?.stop());

test('a module that does not load creates no session; one that does is listed', { timeout: 60000 }, async () => {
  assert.deepEqual(await listSessions(server.url), []);
  // The server answers 404 JSON for an unknown path: not WebAssembly.
  await assert.rejects(createSession(server.url, { wasm: `${server.url}/js/missing.wasm`, WebSocket: globalThis.WebSocket }), (err) => {
    assert.ok(err instanceof AgentsyncError, String(err));
    assert.match(err.message, /missing\.wasm/);
    return true;
  });
  assert.deepEqual(await listSessions(server.url), [], 'nothing was created');

  const session = await createSession(server.url, { WebSocket: globalThis.WebSocket });
  try {
    const list = await listSessions(server.url, { limit: 10 });
    assert.deepEqual(list.map((s) => s.session_id), [session.sessionId]);
    assert.equal(typeof list[0].created_at, 'number');
  } finally {
    session.close();
  }
});
