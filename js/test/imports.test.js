// The package's modules import one another without a cycle: a cycle makes
// what a module sees at load time depend on which one was imported first
// (a class read before its module ran is undefined), and bundlers warn of
// it. Reads the import and export-from statements of every module of the
// package (js/*.js) and looks for a cycle among the relative ones.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from './harness/timed.js';
import { jsDir } from './paths.js';

// The relative module specifiers of one module's static imports and re-exports.
export function relativeImports(source) {
  const out = [];
  const re = /^\s*(?:import|export)\s[^;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gms;
  for (const m of source.matchAll(re)) out.push(m[1] ?? m[2]);
  return out;
}

// The first cycle of the graph (module -> modules it imports), as a path
// that starts and ends with the same module, or null.
export function findCycle(graph) {
  const state = new Map(); // module -> 'visiting' | 'done'
  const stack = [];
  const visit = (m) => {
    if (state.get(m) === 'done') return null;
    if (state.get(m) === 'visiting') return [...stack.slice(stack.indexOf(m)), m];
    state.set(m, 'visiting');
    stack.push(m);
    for (const next of graph.get(m) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(m, 'done');
    return null;
  };
  for (const m of [...graph.keys()].sort()) {
    const cycle = visit(m);
    if (cycle) return cycle;
  }
  return null;
}

async function packageGraph() {
  const graph = new Map();
  for (const name of (await readdir(jsDir)).filter((f) => f.endsWith('.js')).sort()) {
    const source = await readFile(path.join(jsDir, name), 'utf8');
    graph.set(
      name,
      relativeImports(source).map((s) => path.posix.normalize(s)),
    );
  }
  return graph;
}

test('the cycle finder finds a cycle and passes a tree', () => {
  assert.deepEqual(findCycle(new Map([['a.js', ['b.js']], ['b.js', ['c.js']], ['c.js', ['a.js']]])), ['a.js', 'b.js', 'c.js', 'a.js']);
  assert.equal(findCycle(new Map([['a.js', ['b.js', 'c.js']], ['b.js', ['c.js']], ['c.js', []]])), null);
  assert.deepEqual(relativeImports("import { a } from './a.js';\nexport { b } from './b.js';\nimport './c.js';\nimport x from 'react';"), ['./a.js', './b.js', './c.js']);
  assert.deepEqual(relativeImports("import {\n  a,\n  b,\n} from './multi.js';"), ['./multi.js']);
});

test('the package modules import one another without a cycle', async () => {
  const graph = await packageGraph();
  assert.ok(graph.has('index.js') && graph.get('index.js').length > 0, 'the graph was read');
  for (const [from, to] of graph) {
    for (const m of to) assert.ok(graph.has(m), `${from} imports ${m}, which is not a module of the package`);
  }
  assert.equal(findCycle(graph)?.join(' -> ') ?? null, null);
});
