// The wire's constants of the JS host (constants.js): each named as the
// wire names it (its group's prefix, then the value in PascalCase), each
// value one the Go side declares, and equal to its Go namesake where the
// Go packages have one.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from './harness/timed.js';
import * as constants from '../constants.js';
import * as index from '../index.js';
import { repoDir } from './paths.js';

const GROUPS = ['Role', 'Visibility', 'State', 'Part', 'Tool', 'InteractionKind', 'Interaction', 'Action', 'ErrorScope', 'Approval', 'Status'];

const pascal = (wire) => wire.split(/[-_ ]/).map((w) => w[0].toUpperCase() + w.slice(1)).join('');

// The string constants of the Go files under dir: name -> value.
async function goConstants(dir, out = new Map()) {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'testdata' && e.name !== 'node_modules') await goConstants(p, out);
    } else if (e.name.endsWith('.go') && !e.name.endsWith('_test.go')) {
      const src = await readFile(p, 'utf8');
      for (const m of src.matchAll(/^\s*([A-Z][A-Za-z0-9]*)\s+(?:[A-Z][A-Za-z0-9]*\s+)?=\s+"([^"\\]*)"/gm)) out.set(m[1], m[2]);
    }
  }
  return out;
}

test('every constant is named as the wire names it', () => {
  const names = Object.keys(constants);
  assert.ok(names.length >= 40, `${names.length} constants`);
  for (const name of names) {
    const value = constants[name];
    assert.equal(typeof value, 'string', name);
    const named = GROUPS.some((g) => name === g + pascal(value));
    assert.ok(named, `${name} = '${value}' is not a group prefix and '${value}' in PascalCase`);
  }
  assert.equal(constants.ToolAwaitingApproval, 'awaiting-approval');
  assert.equal(constants.ActionRetry, 'retry');
  for (const name of names) assert.equal(index[name], constants[name], `index.js exports ${name}`);
});

test('every constant is a value the Go side declares, equal to its Go namesake', async () => {
  const go = new Map([...(await goConstants(path.join(repoDir, 'synccore'))), ...(await goConstants(path.join(repoDir, 'server')))]);
  const values = new Set(go.values());
  let namesakes = 0;
  for (const [name, value] of Object.entries(constants)) {
    assert.ok(values.has(value), `${name} = '${value}': no Go constant has this value`);
    if (go.has(name)) {
      namesakes++;
      assert.equal(value, go.get(name), `${name} differs from its Go namesake`);
    }
  }
  assert.ok(namesakes >= 40, `${namesakes} constants have a Go namesake`);
});

test('constants.d.ts declares every constant with its value as its type', async () => {
  const dts = await readFile(path.join(repoDir, 'js', 'constants.d.ts'), 'utf8');
  const declared = new Map([...dts.matchAll(/^export declare const (\w+): '([^']*)';$/gm)].map((m) => [m[1], m[2]]));
  assert.deepEqual(declared, new Map(Object.entries(constants)));
});
