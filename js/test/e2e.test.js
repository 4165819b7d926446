// End to end against the real server binary: connect() in Node and in
// headless Chromium, turns of every kind with the connection dropped at
// random moments, then the view must equal the server's snapshot.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
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
