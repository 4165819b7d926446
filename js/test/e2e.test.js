// End to end against the real server binary: connect() in Node and in
// headless Chromium, turns of every kind with the connection dropped at
// random moments, then the view must equal the server's snapshot.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import { openPage } from './harness/browser.js';
import { startServer } from './harness/syncserver.js';
import { startStaticServer } from './harness/static-server.js';
import { wasmPath } from './paths.js';
import { runScenario } from './e2e-scenario.js';

let server;

before(async () => {
  server = await startServer({ speed: process.env.AGENTSYNC_E2E_SPEED ?? '1ms' });
});

after(async () => {
  await server?.stop();
});

// The parts of a message a user sees, for a readable comparison.
const shape = (msgs) =>
  msgs.map((m) => ({
    id: m.message_id,
    sequence: m.sequence,
    revision: m.revision,
    role: m.role,
    state: m.state,
    parts: m.parts.map((p) => ({ id: p.part_id, type: p.type, state: p.state, status: p.status, text: p.text })),
  }));

function check(r) {
  // Nothing here breaks the core: a rebuild would be a core that broke on
  // its own, hidden behind the resync that follows.
  assert.equal(r.rebuilds, 0, 'the core never broke');
  assert.deepEqual(r.violations, [], 'every text shown is a prefix of its final text');
  assert.deepEqual(r.streaming, [], 'no message left streaming');
  assert.deepEqual(shape(r.viewMessages), shape(r.snapshot), 'the view equals the server snapshot');
  assert.equal(r.digest, r.freshDigest, 'the view digest equals a fresh core fed the snapshot');
  assert.match(r.digest, /^[0-9a-f]{64}$/);
  assert.ok(r.observations > 0, 'the listener saw the text stream');
}

test('Node: streams, tool loops and approvals survive random drops', { timeout: 600000 }, async () => {
  const seed = Number(process.env.AGENTSYNC_E2E_SEED ?? Date.now() % 100000);
  const r = await runScenario({ url: server.url, wasm: wasmPath, WebSocket: globalThis.WebSocket, seed, log: () => {} });
  const summary = { seed, drops: r.drops, rebuilds: r.rebuilds, observations: r.observations, messages: r.snapshot.length, longest: r.longestText };
  console.log(`# node e2e ${JSON.stringify(summary)}`);
  assert.ok(r.drops > 0, `the connection was dropped (seed ${seed})`);
  assert.ok(r.longestText >= 100000, 'the long output arrived whole');
  const stopped = r.replies.find((x) => x.turn.startsWith('scenario:long chars=60000'));
  assert.ok(stopped.text < 60000, `the stop cut the stream short (${stopped.text} chars)`);
  assert.ok(r.replies.find((x) => x.turn === 'scenario:tools city=Oslo').types.includes('tool'), 'the tool loop shows its tool part');
  assert.ok(r.replies.find((x) => x.turn === 'scenario:approval').types.includes('interaction'), 'the approval shows its interaction');
  check(r);
});

test('Chromium: the same, once, through the served package', { timeout: 600000 }, async () => {
  const web = await startStaticServer({ backend: server.addr });
  const { page, logs, close } = await openPage(`${web.url}/`);
  try {
    const seed = Number(process.env.AGENTSYNC_E2E_SEED ?? Date.now() % 100000);
    const r = await page.evaluate(
      async ({ seed }) => {
        const { runScenario } = await import('/js/test/e2e-scenario.js');
        const turns = [
          { text: 'scenario:text chars=2000' },
          { text: 'scenario:tools city=Rome' },
          { text: 'scenario:approval', answer: { approved: true } },
          { text: 'scenario:question', answer: { answer: 'green' } },
          { text: 'scenario:long chars=30000 delta=16' },
        ];
        return runScenario({ url: location.origin, wasm: '/js/agentsync.wasm', seed, turns });
      },
      { seed },
    );
    console.log(`# chromium e2e ${JSON.stringify({ seed, drops: r.drops, rebuilds: r.rebuilds, observations: r.observations, messages: r.snapshot.length })}`);
    check(r);
  } catch (err) {
    err.message += `\nbrowser console:\n${logs.join('\n')}`;
    throw err;
  } finally {
    await close();
    await web.close();
  }
});

test('Chromium: the package as the server serves it, with defaults', { timeout: 300000 }, async () => {
  // The page, /js/index.js and /js/agentsync.wasm all come from syncserver
  // itself (its embed of this package): no wasm option, the browser's own
  // WebSocket and fetch, notifications per animation frame.
  const { page, logs, close } = await openPage(`${server.url}/healthz`);
  try {
    const r = await page.evaluate(async () => {
      const { createSession } = await import('/js/index.js');
      const session = await createSession(location.origin, { schedule: 'frame' });
      let views = 0;
      session.subscribe(() => views++);
      const user = await session.send('scenario:text chars=1500');
      await new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('no reply')), 60000);
        session.subscribe((v) => {
          const last = v.messages.at(-1);
          if (last && last.role === 'agent' && last.sequence > user.sequence && last.state === 'done') {
            clearTimeout(t);
            resolve();
          }
        });
      });
      const out = { sessionId: session.sessionId, digest: session.digest(), views, text: session.view.messages.at(-1).parts.find((p) => p.type === 'text').text.length };
      session.close();
      return out;
    });
    assert.equal(r.text, 1500);
    assert.ok(r.views > 1);
    const { connect } = await import('../index.js');
    const node = await connect({ url: server.url, sessionId: r.sessionId, wasm: wasmPath, WebSocket: globalThis.WebSocket });
    assert.equal(node.digest(), r.digest, 'Chromium and Node hold the same view');
    node.close();
  } catch (err) {
    err.message += `\nbrowser console:\n${logs.join('\n')}`;
    throw err;
  } finally {
    await close();
  }
});
