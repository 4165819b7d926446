// The conversation tree through the JS host against the real server on
// loopback: edit and regenerate keep the original, branches() lists the
// alternatives at a position and a page carries their counts beside its
// items, and switchBranch() moves the view to another path (one page and a
// subscription), mid-stream included, ending equal to the server's path.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, connect, createSession, deleteSession, listSessions } from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;
const opts = () => ({ wasm: wasmPath, WebSocket: globalThis.WebSocket });

before(async () => {
  server = await startServer({ speed: '200us' });
});

after(async () => {
  await server?.stop();
});

const ids = (view) => view.messages.map((m) => m.message_id);
const idle = (n) => (v) => v.status === 'live' && v.messages.length === n && v.messages.every((m) => m.role === 'user' || m.state === 'done');

// The server's path of a session, read page by page over HTTP.
async function serverPath(session) {
  const page = await session.messages({ limit: 200 });
  return page.items.map((m) => m.message_id);
}

test('edit, regenerate, branches and switchBranch keep every path exact', async (t) => {
  let session = await createSession(server.url, opts());
  t.after(() => session.close());
  const root = session.sessionId;
  await session.send('hello');
  await session.waitFor(idle(2));
  await session.send('scenario:text chars=300');
  const orig = ids(await session.waitFor(idle(4)));

  const edit = await session.edit(3, 'hello, edited');
  assert.equal(edit.parent_session_id, root);
  assert.equal(edit.fork_sequence, 3);
  assert.equal(edit.root_session_id, root);
  const regen = await session.regenerate(4);
  const regen2 = await session.regenerate(4);
  assert.equal(regen.fork_sequence, 4);
  await assert.rejects(session.fork(1), (e) => e instanceof AgentsyncError && e.code === 'bad_request');

  // The root's own view never changed.
  assert.deepEqual(ids(session.view), orig);
  const b = await session.branches(4);
  assert.equal(b.index, 0);
  assert.deepEqual(
    b.items.map((x) => x.session_id),
    [root, regen.session_id, regen2.session_id],
  );
  assert.equal(b.items[0].message.message_id, orig[3]);

  // Switch to the second regeneration: the shared prefix keeps its ids.
  session = await session.switchBranch(regen2.session_id);
  const rv = await session.waitFor(idle(4));
  assert.equal(rv.session_id, regen2.session_id);
  assert.deepEqual(ids(rv).slice(0, 3), orig.slice(0, 3));
  assert.notEqual(ids(rv)[3], orig[3]);
  assert.deepEqual(ids(rv), await serverPath(session));
  assert.deepEqual(await session.alternatives(), [
    { sequence: 3, count: 2, index: 0 },
    { sequence: 4, count: 3, index: 2 },
  ]);

  // Mid-stream: a long answer on this branch, a switch to the edit while it
  // streams, then back; each view ends equal to the server's path.
  await session.send('scenario:long chars=40000 delta=16');
  await session.waitFor((v) => {
    const last = v.messages.at(-1);
    return last && last.role === 'agent' && last.state === 'streaming' && (last.parts[0]?.text?.length ?? 0) > 100;
  });
  const here = await session.fork(6); // 1..5 are done, the parent keeps streaming
  session = await session.switchBranch(edit.session_id);
  const ev = await session.waitFor(idle(4));
  assert.deepEqual(ids(ev).slice(0, 2), orig.slice(0, 2));
  assert.equal(ev.messages[2].parts[0].text, 'hello, edited');
  assert.deepEqual((await session.branches(3)).items.map((x) => x.session_id), [root, edit.session_id]);
  assert.deepEqual(ids(ev), await serverPath(session));

  session = await session.switchBranch(regen2.session_id);
  const back = await session.waitFor(idle(6));
  assert.deepEqual(ids(back), await serverPath(session));

  // The fork made mid-stream holds the prefix only.
  session = await session.switchBranch(here.session_id);
  const hv = await session.waitFor(idle(5));
  assert.deepEqual(ids(hv), ids(back).slice(0, 5));

  // The list names every session's conversation.
  const mine = (await listSessions(server.url)).filter((s) => s.root_session_id === root);
  assert.equal(mine.length, 5);
});

test('a fork made by another client reaches this one as an alternatives signal', async (t) => {
  const mine = await createSession(server.url, opts());
  t.after(() => mine.close());
  await mine.send('hello');
  await mine.waitFor(idle(2));
  // Another tab (or device) on the same session regenerates the reply.
  const other = await connect({ url: server.url, sessionId: mine.sessionId, ...opts() });
  t.after(() => other.close());
  await other.waitFor(idle(2));
  const heard = [];
  const off = mine.on('alternatives', (a) => heard.push(a));
  t.after(off);
  const regen = await other.regenerate(2);
  await waitUntil(() => heard.length >= 1);
  assert.deepEqual(heard[0], { sequence: 2, count: 2, index: 0 });
  // Deleting the fork takes the alternative back.
  await deleteSession(server.url, regen.session_id);
  await waitUntil(() => heard.length >= 2);
  assert.deepEqual(heard[1], { sequence: 2, count: 1, index: 0 });
  // The signals never touched the view's numbering: still live, same path.
  assert.equal(mine.view.status, 'live');
  assert.deepEqual(ids(mine.view), await serverPath(mine));
});

async function waitUntil(cond, timeoutMs = 20000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('presence: another tab on the session counts, and its typing is told', async (t) => {
  const mine = await createSession(server.url, opts());
  t.after(() => mine.close());
  await mine.waitFor((v) => v.status === 'live');
  const other = await connect({ url: server.url, sessionId: mine.sessionId, ...opts() });
  t.after(() => other.close());
  const seen = [];
  t.after(mine.on('presence', (viewers) => seen.push(viewers)));
  await waitUntil(() => mine.presence.length === 1 && mine.presence[0].connections === 2);
  await other.typing(true);
  await waitUntil(() => mine.presence[0]?.typing === true);
  assert.deepEqual(mine.presence, [{ principal: '', connections: 2, typing: true }]);
  await other.typing(false);
  await waitUntil(() => mine.presence[0]?.typing === false);
  other.close();
  await waitUntil(() => mine.presence[0]?.connections === 1);
  assert.ok(seen.length >= 3, `presence events: ${seen.length}`);
  assert.equal(mine.view.status, 'live');
});
