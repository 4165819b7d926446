// Node's engine requirement is stated once, in package.json's engines, and
// holds for what the package's tests and examples pin: the `ai` packages
// (the same version in js/, js/bench and examples/vite-react) need no newer
// Node than it, and the Node running the tests meets it.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from './harness/timed.js';
import { jsDir, repoDir } from './paths.js';

const readJSON = async (...p) => JSON.parse(await readFile(path.join(...p), 'utf8'));

// The lowest Node version a range of the forms these packages use
// (">=20", ">=18.17", "^20.19.0 || >=22.12.0") allows, as [major, minor].
function lowest(range) {
  const mins = range.split('||').map((alt) => {
    const m = /(?:>=|\^)\s*(\d+)(?:\.(\d+))?/.exec(alt.trim());
    assert.ok(m, `a range this test reads: ${range}`);
    return [Number(m[1]), Number(m[2] ?? 0)];
  });
  return mins.sort((a, b) => a[0] - b[0] || a[1] - b[1])[0];
}

const atLeast = (v, min) => v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);

test('the lowest-version reader reads the forms in use', () => {
  assert.deepEqual(lowest('>=20'), [20, 0]);
  assert.deepEqual(lowest('>=18.17'), [18, 17]);
  assert.deepEqual(lowest('^20.19.0 || >=22.12.0'), [20, 19]);
});

test('package.json states the engine; the pinned ai packages need no newer Node', async () => {
  const pkg = await readJSON(jsDir, 'package.json');
  const ours = lowest(pkg.engines.node);
  const version = pkg.devDependencies.ai;
  assert.match(version, /^\d+\.\d+\.\d+$/, 'ai is pinned exactly');
  for (const other of [path.join(jsDir, 'bench'), path.join(repoDir, 'examples', 'vite-react')]) {
    const p = await readJSON(other, 'package.json');
    assert.equal(p.devDependencies.ai, version, `${other} pins the same ai`);
    assert.equal(p.engines, undefined, `${other} states no engine of its own`);
  }
  const lock = await readJSON(jsDir, 'package-lock.json');
  const aiPackages = Object.entries(lock.packages).filter(([k]) => k === 'node_modules/ai' || k.startsWith('node_modules/@ai-sdk/'));
  assert.ok(aiPackages.length >= 2, 'ai and its @ai-sdk packages are locked');
  assert.equal(lock.packages['node_modules/ai'].version, version);
  assert.ok(lock.packages['node_modules/ai'].engines?.node, 'the lock records what ai needs');
  for (const [name, entry] of aiPackages) {
    if (!entry.engines?.node) continue;
    const theirs = lowest(entry.engines.node);
    assert.ok(atLeast(ours, theirs), `${name} ${entry.version} needs Node ${entry.engines.node}; package.json says ${pkg.engines.node}`);
  }
  const running = process.versions.node.split('.').map(Number);
  assert.ok(atLeast(running, ours), `Node ${process.versions.node} runs the tests; package.json says ${pkg.engines.node}`);
});
