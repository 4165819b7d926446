// Conformance: every trace of testdata/traces through the module, in Node
// and in headless Chromium. The expected commands and digests are the ones
// the native Go core and wazero are checked against, so all four hosts
// agree.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from './harness/timed.js';
import { Core } from '../core.js';
import { openPage } from './harness/browser.js';
import { startStaticServer } from './harness/static-server.js';
import { tracesDir, wasmPath } from './paths.js';
import { runTraces } from './trace-runner.js';

async function traceFiles() {
  const names = (await readdir(tracesDir)).filter((n) => n.endsWith('.json')).sort();
  return names;
}

async function loadTraces() {
  const names = await traceFiles();
  return Promise.all(names.map(async (n) => ({ file: n, ...JSON.parse(await readFile(path.join(tracesDir, n), 'utf8')) })));
}

function check(results, host) {
  assert.ok(results.length > 0, 'there are traces');
  const steps = results.reduce((n, r) => n + r.steps, 0);
  assert.ok(steps > 0, 'the traces have steps');
  const failures = results.flatMap((r) => r.failures);
  assert.deepEqual(failures, [], `${host}: every command and digest as expected`);
  return steps;
}

test('Node: every trace gives the expected commands and digests', async () => {
  const traces = await loadTraces();
  const results = await runTraces(Core, wasmPath, traces);
  const steps = check(results, 'node');
  console.log(`# node conformance: ${results.length} traces, ${steps} steps`);
});

test('Chromium: every trace gives the expected commands and digests', { timeout: 300000 }, async () => {
  const names = await traceFiles();
  const web = await startStaticServer();
  const { page, logs, close } = await openPage(`${web.url}/`);
  try {
    const results = await page.evaluate(async (names) => {
      const { Core } = await import('/js/core.js');
      const { runTraces } = await import('/js/test/trace-runner.js');
      const traces = await Promise.all(
        names.map(async (n) => {
          const res = await fetch(`/traces/${n}`);
          if (!res.ok) throw new Error(`fetch /traces/${n}: ${res.status}`);
          return { file: n, ...(await res.json()) };
        }),
      );
      return runTraces(Core, '/js/agentsync.wasm', traces);
    }, names);
    const steps = check(results, 'chromium');
    console.log(`# chromium conformance: ${results.length} traces, ${steps} steps`);

    // Host against host: the same digests and the same Output bytes.
    const nodeResults = await runTraces(Core, wasmPath, await loadTraces());
    assert.deepEqual(
      results.map((r) => r.digests),
      nodeResults.map((r) => r.digests),
      'Node and Chromium give identical digests',
    );
    assert.deepEqual(
      results.map((r) => r.outputs),
      nodeResults.map((r) => r.outputs),
      'Node and Chromium give identical Output bytes',
    );
  } catch (err) {
    err.message += `\nbrowser console:\n${logs.join('\n')}`;
    throw err;
  } finally {
    await close();
    await web.close();
  }
});
