// Every test of the package is bounded: each test file takes test, before
// and after from harness/timed.js (a default timeout per test and hook,
// since Node 20's --test-timeout bounds a whole file), never straight from
// node:test; and the wrapper keeps a timeout a test gives itself.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { TEST_TIMEOUT_MS, test, withTimeout } from './harness/timed.js';
import { jsDir } from './paths.js';

test('every test file takes its test and hooks from harness/timed.js', async () => {
  let files = 0;
  for (const dir of ['test', 'demo-test']) {
    for (const name of (await readdir(path.join(jsDir, dir))).filter((f) => f.endsWith('.test.js'))) {
      files++;
      const src = await readFile(path.join(jsDir, dir, name), 'utf8');
      assert.doesNotMatch(src, /from ['"]node:test['"]/, `${dir}/${name} imports node:test itself`);
      assert.match(src, /from ['"](?:\.\/|\.\.\/test\/)harness\/timed\.js['"]/, `${dir}/${name} does not import harness/timed.js`);
    }
  }
  assert.ok(files >= 20, `${files} test files`);
});

test('the wrapper adds the default timeout and keeps one given', () => {
  const fn = () => {};
  assert.deepEqual(withTimeout(['name', fn], 5), ['name', { timeout: 5 }, fn]);
  assert.deepEqual(withTimeout(['name', { timeout: 9 }, fn], 5), ['name', { timeout: 9 }, fn]);
  assert.deepEqual(withTimeout(['name', { concurrency: 1 }, fn], 5), ['name', { concurrency: 1, timeout: 5 }, fn]);
  assert.deepEqual(withTimeout([fn], 5), [{ timeout: 5 }, fn]);
  assert.ok(TEST_TIMEOUT_MS <= 60_000, 'a hung test fails within a minute');
});
