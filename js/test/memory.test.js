// The Node host follows a 1,000,000-character answer (about one delta per
// WebSocket message) in bounded memory: a process of its own
// (bench/follow.mjs) reports its peak RSS, JS heap and the module's linear
// memory, each held to a bound. Re-reading the whole message per render, the
// host's cost per delta grew with the answer.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from './harness/timed.js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer } from './harness/syncserver.js';

const run = promisify(execFile);
let server;

before(async () => {
  server = await startServer({ speed: '1us' });
});

after(async () => {
  await server?.stop();
});

test('a 1,000,000-character answer is followed in bounded memory', { timeout: 6 * 60 * 1000 }, async () => {
  const script = fileURLToPath(new URL('../bench/follow.mjs', import.meta.url));
  const { stdout } = await run(process.execPath, ['--experimental-websocket', script, server.url, '1000000'], { timeout: 300000 });
  const r = JSON.parse(stdout.trim().split('\n').at(-1));
  console.log(`# node follow ${JSON.stringify(r)}`);
  assert.equal(r.chars, 1000000);
  assert.ok(r.appended_shown > 900000, `a renderer was shown only ${r.appended_shown} appended characters`);
  assert.ok(r.module_bytes > 0 && r.module_bytes <= 40 << 20, `module memory ${r.module_bytes >> 20} MB, bound 40 MB`);
  assert.ok(r.max_heap_bytes <= 128 << 20, `peak JS heap ${r.max_heap_bytes >> 20} MB, bound 128 MB`);
  assert.ok(r.max_rss_bytes <= 320 << 20, `peak RSS ${r.max_rss_bytes >> 20} MB, bound 320 MB`);
});
