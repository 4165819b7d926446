// Share links and authors through the JS host against the real server on
// loopback: a write link's token opens the session and posts as the link
// (messageAuthor says so), the owner lists and revokes it, and the
// link's Session then ends.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, StateDone, connect, createSession, createShare, listMembers, listShares, messageAuthor, revokeShare } from '../index.js';
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

test('a write link opens the session, posts as the link, and ends when revoked', async (t) => {
  const owner = await createSession(server.url, opts());
  t.after(() => owner.close());
  const first = await owner.send('hello');
  assert.equal(messageAuthor(first), null, "the owner's message has no author part");
  await owner.waitFor((v) => v.messages.some((m) => m.sequence > first.sequence && m.state === StateDone));

  const share = await createShare(server.url, owner.sessionId, { mode: 'write' });
  assert.ok(share.token.startsWith('ash_'));
  const listed = await listShares(server.url, owner.sessionId);
  assert.deepEqual(listed.map((s) => [s.share_id, s.token]), [[share.share_id, undefined]]);
  assert.deepEqual((await listMembers(server.url, owner.sessionId)).map((m) => m.role), ['owner']);

  const guest = await connect({ url: server.url, sessionId: owner.sessionId, token: share.token, ...opts() });
  t.after(() => guest.close());
  await guest.waitFor((v) => v.messages.length >= 2);
  const posted = await guest.send('from the link');
  assert.deepEqual(messageAuthor(posted), { share_id: share.share_id });
  await owner.waitFor((v) => v.messages.some((m) => messageAuthor(m)?.share_id === share.share_id));
  await assert.rejects(createShare(server.url, owner.sessionId, {}, { token: share.token }), (e) => e instanceof AgentsyncError && e.code === 'forbidden');

  const ended = guest.waitFor((v) => v.status !== 'live');
  await revokeShare(server.url, owner.sessionId, share.share_id);
  await ended;
  await assert.rejects(guest.messages(), (e) => e instanceof AgentsyncError && e.code === 'unauthorized');
  assert.equal(owner.status, 'live', "the owner's session goes on");
});
