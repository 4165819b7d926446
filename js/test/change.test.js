// The incremental render in the Node host: 'change' events carry what a
// renderer must do (append this text, take this part or message whole), and
// the text rebuilt from them alone equals the view's through connection
// drops; unchanged messages and parts keep their object identity.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { createSession } from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;

before(async () => {
  server = await startServer({ speed: '100us' });
});

after(async () => {
  await server?.stop();
});

test('change events rebuild every text from appends, through drops', async (t) => {
  const session = await createSession(server.url, { wasm: wasmPath, WebSocket: globalThis.WebSocket });
  t.after(() => session.close());
  const copy = new Map(); // message id -> part texts, from change events alone
  let appends = 0;
  let resets = 0;
  session.on('change', (c) => {
    if (c.reset) {
      resets++;
      copy.clear();
    }
    for (const mc of c.messages) {
      let texts = copy.get(mc.message_id);
      if (!texts) copy.set(mc.message_id, (texts = []));
      for (const pc of mc.parts) {
        if (pc.appended !== undefined) {
          assert.ok(pc.part.text.endsWith(pc.appended), 'part.text ends with what was appended');
          texts[pc.index] += pc.appended;
          appends++;
        } else {
          texts[pc.index] = pc.part.text ?? '';
        }
      }
      texts.length = mc.message.parts.length;
    }
  });
  // Identity: between two views, a message that did not change is the same object.
  let prev = null;
  let kept = 0;
  session.subscribe((v) => {
    if (prev && v.messages.length > 1 && prev.messages.length === v.messages.length) {
      const a = prev.messages[0];
      const b = v.messages[0];
      if (a === b) kept++;
    }
    prev = v;
  });

  const sent = await session.send('scenario:long chars=60000 delta=8');
  for (const at of [15000, 30000]) {
    await session.waitFor((v) => {
      const last = v.messages.at(-1);
      return last && last.sequence > sent.sequence && last.parts.some((p) => (p.text ?? '').length > at);
    });
    assert.ok(session.dropConnection(), 'a connection to drop');
  }
  const view = await session.waitFor((v) => {
    const last = v.messages.at(-1);
    return last && last.sequence > sent.sequence && last.state === 'done';
  });
  // The view waitFor resolved with may have been read (and flushed) before
  // its notification: the change events go out in that notification, a
  // microtask, so they are all out once a macrotask runs.
  await new Promise((r) => setImmediate(r));
  assert.equal(copy.size, view.messages.length);
  for (const m of view.messages) {
    assert.deepEqual(copy.get(m.message_id), m.parts.map((p) => p.text ?? ''), `texts of ${m.message_id}`);
  }
  const answer = view.messages.at(-1).parts.find((p) => p.type === 'text');
  assert.equal(answer.text.length, 60000);
  assert.ok(appends > 100, `only ${appends} appends over a 7,500-delta answer`);
  assert.ok(kept > 10, `the user message kept its identity in only ${kept} views`);
  session.close();
});
