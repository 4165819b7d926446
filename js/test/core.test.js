// The ABI wrapper against the real module: version check, error Outputs of
// view/message/digest, the frames fast path, traps and rebuild duties.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from './harness/timed.js';
import { AgentsyncError, COMPACT, CORE_BROKEN, Core, loadModule } from '../core.js';
import { decode, encode } from '../msgpack.js';
import { tracesDir, wasmPath } from './paths.js';
import { fromBase64 } from './trace-runner.js';

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

test('handleFrames and handle (its direct path for data of 64 KiB and more) write the event bytes encode writes', async () => {
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

// A core live on session s whose snapshot holds one streaming agent
// message m1 with text part p1 ("hello"), taken by the host (a map take).
async function liveCore(source = wasmPath) {
  const core = await Core.load(source);
  core.handle({ type: 'start', session_id: 's' });
  core.handle({ type: 'subscription_opened' });
  const hello = core.handleChanges(encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: 's', head_sequence: 1 }]));
  const fetch = hello.out.commands.find((c) => c.type === 'fetch_page');
  assert.ok(fetch, 'the hello asks for the snapshot');
  const part = { part_id: 'p1', sequence: 1, type: 'text', step_id: 's1', state: 'streaming', text: 'hello' };
  const msg = { message_id: 'm1', session_id: 's', sequence: 1, revision: 1, role: 'agent', state: 'streaming', turn_id: 't', visibility: 'visible', created_at: 1, parts: [part] };
  core.handle({ type: 'page', request_id: fetch.request_id, data: encode({ items: [msg], total: 1, start_sequence: 1, end_sequence: 1, has_more: false }) });
  core.changes();
  return { core, part, msg };
}

test('handleChanges: a delta in the appends form, a part frame as a Changes map, and nothing after an unknown handle', async () => {
  const { core, part } = await liveCore();

  const delta = core.handleChanges(encode([{ seq: 2, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset: 5, text: ' wörld' }]));
  assert.deepEqual(delta.out.commands, [], 'a render of one message is left to the changes');
  assert.deepEqual(delta.changes, { status: 'live', total: 1, has_more_older: false, loading_older: false, include_internal: false, appends: ['m1', 0, ' wörld'] });

  const done = { ...part, state: 'done', text: 'hello wörld!' };
  const whole = core.handleChanges(encode([{ seq: 3, kind: 'part', message_id: 'm1', revision: 1, part: done }]));
  assert.equal(whole.changes.appends, undefined);
  assert.deepEqual(whole.changes.messages, [{ message_id: 'm1', parts: [{ index: 0, part: { ...done, text: '!' }, kept_text: true }] }], 'without the text the host holds');
  const other = { ...part, state: 'done', text: 'bye' };
  const replaced = core.handleChanges(encode([{ seq: 4, kind: 'part', message_id: 'm1', revision: 1, part: other }]));
  assert.deepEqual(replaced.changes.messages, [{ message_id: 'm1', parts: [{ index: 0, part: other }] }], 'a text that does not continue it comes whole');

  core.h = 12345; // a handle the module never gave out
  const unknown = core.handleChanges(encode([{ seq: 4, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset: 12, text: '?' }]));
  assert.equal(unknown.out.error?.code, 'bad_request');
  assert.equal(unknown.changes, null);
  assert.equal(core.broken, false, 'bad_request does not break the instance');
});

test('handleCompact: a delta after a one-append take comes back in 64 bits, with its text from the message\'s own bytes', async () => {
  const { core, part } = await liveCore(); // its take was a map: no base for a compact answer
  assert.equal(core.compactId, null);

  const delta = (seq, offset, text) => core.handleCompact(encode([{ seq, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset, text }]));
  const first = delta(2, 5, ' wö');
  assert.deepEqual(first.changes.appends, ['m1', 0, ' wö'], 'the first delta: the appends form');
  assert.equal(core.compactId, 'm1');
  let text = 'hello wö';
  for (let i = 0; i < 50; i++) {
    const t = i % 7 === 0 ? 'ü€' : `-${i}`; // multi-byte text too
    assert.equal(delta(3 + i, Buffer.byteLength(text), t), COMPACT, `delta ${i}`);
    assert.equal(core.compactIndex, 0);
    assert.equal(core.compactText, t);
    text += t;
  }
  assert.equal(core.view().messages[0].parts[0].text, text);
  // A part frame is taken whole: the map form, and no base after it; its
  // text continues the one the host holds, so only the rest comes.
  const whole = core.handleCompact(encode([{ seq: 53, kind: 'part', message_id: 'm1', revision: 1, part: { ...part, text: `${text}.` } }]));
  assert.deepEqual(whole.changes.messages[0].parts[0], { index: 0, part: { ...part, text: '.' }, kept_text: true });
  assert.equal(core.compactId, null);
});

test('a commit of a message the host holds comes without the text it holds (kept_texts), the rest after it', async () => {
  const { core, part, msg } = await liveCore();
  const long = 'x'.repeat(5000);
  core.handleCompact(encode([{ seq: 2, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset: 5, text: long }]));
  // Text the host has not taken, then the commit, in one message: the
  // commit carries only that rest.
  const committed = { ...msg, revision: 2, state: 'done', parts: [{ ...part, state: 'done', text: `hello${long}!!` }] };
  const res = core.handleCompact(encode([
    { seq: 3, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset: 5 + long.length, text: '!!' },
    { seq: 4, kind: 'message', message: committed },
  ]));
  const mc = res.changes.messages[0];
  assert.deepEqual(mc.kept_texts, ['p1']);
  assert.equal(mc.message.parts[0].text, '!!', 'only the text the host had not taken');
  assert.equal(mc.message.revision, 2);
  assert.equal(core.view().messages[0].parts[0].text, `hello${long}!!`);
});

test('a freed core\'s instance serves the next Core.load of its module; a broken one is not reused', async () => {
  const mod = await loadModule(wasmPath);
  const a = await Core.load(mod);
  a.handle({ type: 'start', session_id: 'a' });
  a.free();
  assert.throws(() => a.view(), (e) => e.code === CORE_BROKEN, 'a freed core answers nothing');
  const b = await Core.load(mod);
  assert.equal(b.instance, a.instance, 'the idle instance is reused');
  assert.notEqual(b.h, a.h, 'with a new client');
  assert.equal(b.view().status, 'idle', 'which starts empty');
  const c = await Core.load(mod);
  assert.notEqual(c.instance, b.instance, 'an instance in use is not handed out twice');
  c.x = { ...c.x, agentsync_view: () => { throw new WebAssembly.RuntimeError('unreachable'); } };
  assert.throws(() => c.view(), (e) => e.code === CORE_BROKEN);
  c.free();
  b.free();
  const d = await Core.load(mod);
  assert.equal(d.instance, b.instance, 'the healthy instance is kept, the broken one dropped');
  d.free();
});

test('an ABI version other than this host\'s (4) is refused', async () => {
  const mod = await loadModule(wasmPath);
  const { Wasi } = await import('../wasi.js');
  const wasi = new Wasi();
  const instance = await WebAssembly.instantiate(mod, wasi.imports(mod));
  wasi.setMemory(instance.exports.memory);
  const fake = { exports: { ...instance.exports, agentsync_abi_version: () => 1 } };
  assert.throws(() => new Core(fake, mod), (e) => e instanceof AgentsyncError && /ABI version 1/.test(e.message));
});

test('a trap marks the core broken and every later call refuses', async () => {
  const core = await Core.load(wasmPath);
  core.x = {
    ...core.x,
    agentsync_handle: () => {
      throw new WebAssembly.RuntimeError('unreachable');
    },
  };
  assert.throws(() => core.handle({ type: 'close' }), (e) => e.code === CORE_BROKEN && /unreachable/.test(e.message));
  assert.equal(core.broken, true);
  assert.throws(() => core.view(), (e) => e.code === CORE_BROKEN);
});

// Places an Output in the module's memory by hand and answers it from
// agentsync_handle, as the module does after a recovered panic.
function answerOutput(core, output) {
  core.x = {
    ...core.x,
    agentsync_handle: () => {
      const bytes = encode(output);
      const ptr = core.x.agentsync_alloc(bytes.length);
      new Uint8Array(core.memory.buffer, ptr, bytes.length).set(bytes);
      return (BigInt(ptr) << 32n) | BigInt(bytes.length);
    },
  };
}

test('only a core_broken Output marks the core broken', async () => {
  const core = await Core.load(wasmPath);
  const real = core.x;
  // An internal error with no command (the shape the old heuristic took
  // for a panic) is a reported error: the core stays in use.
  answerOutput(core, { commands: [], error: { code: 'internal', message: 'server error frame: boom' } });
  let out = core.handle({ type: 'close' });
  assert.equal(out.error.code, 'internal');
  assert.equal(core.broken, false);
  core.x = real;
  assert.match(core.digest(), /^[0-9a-f]{64}$/);

  answerOutput(core, { commands: [], error: { code: CORE_BROKEN, message: 'agentsync_handle: panic: boom' } });
  out = core.handle({ type: 'close' });
  assert.equal(out.error.code, CORE_BROKEN);
  assert.equal(core.broken, true);
  assert.throws(() => core.digest(), (e) => e instanceof AgentsyncError && e.code === CORE_BROKEN);
  assert.throws(() => core.handleFrames(new Uint8Array([0x90])), (e) => e.code === CORE_BROKEN);
});

test('a server error frame with code internal (trace 27) leaves the core in use', async () => {
  const trace = JSON.parse(await readFile(path.join(tracesDir, '27-server-error-frame.json'), 'utf8'));
  const core = await Core.load(wasmPath);
  let internal = 0;
  for (const step of trace.steps) {
    const out = core.handleBytes(fromBase64(step.event_b64));
    assert.equal(out.error?.code, step.expect.error, step.note);
    if (out.error?.code === 'internal') {
      internal++;
      assert.ok(out.commands.length > 0, 'the error frame asks for a resync');
    }
    assert.equal(core.broken, false, `${step.note}: not broken`);
  }
  assert.equal(internal, 1, 'the trace reports the server error once');
  assert.equal(core.digest(), trace.steps.at(-1).expect.digest);
  assert.ok(core.view().messages.length > 0, 'the view is still readable');
});

test('warm streams a synthetic answer through a scratch client of the instance while the core goes on, once per instance', async () => {
  // A module of its own: an instance another test warmed would be skipped.
  const { core } = await liveCore(new Uint8Array(await readFile(wasmPath)));
  let seq = 2;
  let offset = 5;
  let text = 'hello';
  let pauses = 0;
  // Between two slices the core takes deltas of its own: the input buffer
  // both clients write must not be stale for either.
  const pause = async () => {
    pauses++;
    const t = ` d${pauses}é`;
    const res = core.handleCompact(encode([{ seq: seq++, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset, text: t }]));
    assert.ok(res === COMPACT || res.changes.appends?.[2] === t, `delta ${pauses} taken`);
    offset += Buffer.byteLength(t);
    text += t;
  };
  const memory = core.memory.buffer.byteLength;
  await core.warm({ bytes: 256 * 1024, pause });
  assert.ok(pauses >= 4, `${pauses} slices`);
  assert.equal(core.broken, false);
  const view = core.view();
  assert.equal(view.messages.length, 1, 'the scratch session is not in this client\'s view');
  assert.equal(view.messages[0].parts[0].text, text);
  assert.ok(core.memory.buffer.byteLength >= memory);

  let again = 0;
  await core.warm({ pause: async () => again++ });
  assert.equal(again, 0, 'a warm instance is not warmed again');
  core.free();
});

