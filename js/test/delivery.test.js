// A message sent while a turn runs carries its delivery (issue 26, point
// 5), against the real server: steer (the default) joins the running turn,
// queue waits and is answered by a turn of its own, interrupt stops the
// running turn and is answered at once.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { AgentsyncError, createSession } from '../index.js';
import { startServer } from './harness/syncserver.js';

let server;

before(async () => {
  server = await startServer({ speed: '1ms' });
});

after(async () => {
  await server?.stop();
});

const delivery = (m) => m.parts.find((p) => p.type === 'data' && p.data_type === 'agentsync.delivery')?.data?.delivery;
const agentOf = (v, turnId) => v.messages.find((m) => m.role === 'agent' && m.turn_id === turnId);
const streaming = (v) => v.messages.some((m) => m.role === 'agent' && m.state === 'streaming' && m.parts.some((p) => p.type === 'text'));

test('delivery: steer joins the running turn, queue waits for it, interrupt stops it', async () => {
  const s = await createSession(server.url);
  try {
    const first = await s.send('scenario:text chars=20000 delta=5');
    await s.waitFor(streaming);
    const steer = await s.send('and a steer', { delivery: 'steer' });
    assert.equal(steer.turn_id, first.turn_id);
    assert.equal(delivery(steer), undefined);
    const queued = await s.send('scenario:text chars=200', { delivery: 'queue' });
    assert.notEqual(queued.turn_id, first.turn_id);
    assert.equal(delivery(queued), 'queue');
    // Shown as queued on every device: its part is in the synced view, and
    // no message of its turn exists while the first one runs.
    const v = await s.waitFor((v) => v.messages.some((m) => m.message_id === queued.message_id));
    assert.equal(delivery(v.messages.find((m) => m.message_id === queued.message_id)), 'queue');
    const done = await s.waitFor((v) => agentOf(v, queued.turn_id)?.state === 'done', { timeoutMs: 60000 });
    const a1 = agentOf(done, first.turn_id);
    assert.equal(a1.state, 'done');
    assert.ok(!a1.parts.some((p) => p.type === 'error'), 'the first turn ended well');
    assert.ok(done.messages.indexOf(a1) < done.messages.findIndex((m) => m.turn_id === queued.turn_id && m.role === 'agent'));

    const third = await s.send('scenario:text chars=20000 delta=5');
    await s.waitFor((v) => agentOf(v, third.turn_id)?.parts.some((p) => p.type === 'text'));
    const instead = await s.send('scenario:text chars=100', { delivery: 'interrupt' });
    assert.equal(delivery(instead), 'interrupt');
    const after = await s.waitFor((v) => agentOf(v, instead.turn_id)?.state === 'done', { timeoutMs: 60000 });
    const stopped = agentOf(after, third.turn_id);
    assert.ok(stopped.parts.some((p) => p.type === 'action' && p.action_type === 'stop'), 'the interrupted turn closed with the stop');

    await assert.rejects(s.send('x', { delivery: 'later' }), (err) => err instanceof AgentsyncError && err.code === 'bad_request');
  } finally {
    s.close();
  }
});
