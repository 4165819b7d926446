// The ABI wrapper against the real module: version check, error Outputs of
// view/message/digest, the frames fast path, traps and rebuild duties.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { AgentsyncError, Core, loadModule } from '../core.js';
import { decode, encode } from '../msgpack.js';
import { wasmPath } from './paths.js';

test('loads from a path, bytes, a file URL and a compiled module', async () => {
  const bytes = await readFile(wasmPath);
  const mod = await loadModule(wasmPath);
  for (const src of [wasmPath, new Uint8Array(bytes), new URL(`file://${wasmPath}`), mod]) {
    const core = await Core.load(src);
    assert.equal(core.broken, false);
    assert.ok(core.h > 0);
    core.free();
  }
});

test('an unknown handle gets bad_request on every export', async () => {
  const core = await Core.load(wasmPath);
  core.free();
  core.h = 12345; // a handle the module never gave out
  core.broken = false;
  const out = core.handle({ type: 'start', session_id: 's' });
  assert.equal(out.error?.code, 'bad_request');
  assert.throws(() => core.view(), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
  assert.throws(() => core.message('m'), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
  assert.throws(() => core.digest(), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
  assert.equal(core.broken, false, 'bad_request does not break the instance');
});

test('handleFrames writes the same event bytes as handle({type: "frames"})', async () => {
  // Capture what reaches the module's input buffer through both paths.
  for (const n of [0, 1, 255, 256, 65535, 65536, 200000]) {
    const data = new Uint8Array(n).map((_, i) => i & 0xff);
    const seen = [];
    const core = await Core.load(wasmPath);
    const real = core.x.agentsync_handle;
    core.x = {
      ...core.x,
      agentsync_handle: (h, ptr, len) => {
        seen.push(new Uint8Array(core.memory.buffer, ptr, len).slice());
        return real(h, ptr, len);
      },
    };
    core.handleFrames(data);
    core.handle({ type: 'frames', data });
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[0], seen[1], `n=${n}`);
    assert.deepEqual(seen[0], encode({ type: 'frames', data }));
    assert.deepEqual(decode(seen[0]).data, data);
  }
});

test('an ABI version other than 1 is refused', async () => {
  const mod = await loadModule(wasmPath);
  const { Wasi } = await import('../wasi.js');
  const wasi = new Wasi();
  const instance = await WebAssembly.instantiate(mod, wasi.imports(mod));
  wasi.setMemory(instance.exports.memory);
  const fake = { exports: { ...instance.exports, agentsync_abi_version: () => 2 } };
  assert.throws(() => new Core(fake, mod), (e) => e instanceof AgentsyncError && /ABI version 2/.test(e.message));
});

test('a trap marks the core broken and every later call refuses', async () => {
  const core = await Core.load(wasmPath);
  core.x = {
    ...core.x,
    agentsync_handle: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
  };
  assert.throws(() => core.handle({ type: 'close' }), (e) => e.code === 'internal' && /unreachable/.test(e.message));
  assert.equal(core.broken, true);
  assert.throws(() => core.view(), (e) => e.code === 'internal');
});

test('an internal error Output marks the core broken', async () => {
  const core = await Core.load(wasmPath);
  core.x = {
    ...core.x,
    agentsync_handle: () => {
      // An Output {commands: [], error: {code: internal}} placed in memory
      // by hand, as the module does after a recovered panic.
      const bytes = encode({ commands: [], error: { code: 'internal', message: 'panic: boom' } });
      const ptr = core.x.agentsync_alloc(bytes.length);
      new Uint8Array(core.memory.buffer, ptr, bytes.length).set(bytes);
      return (BigInt(ptr) << 32n) | BigInt(bytes.length);
    },
  };
  const out = core.handle({ type: 'close' });
  assert.equal(out.error.code, 'internal');
  assert.equal(core.broken, true);
});
