// The host's patched copy of the view under a long random stream of frames
// through the real module (one WebSocket message each, as a live socket
// delivers them): deltas to several parts of several messages, interleaved,
// ASCII and not, parts replaced and added between them; one frame per task,
// and in bursts taken together. After every frame (or burst) the view holds
// the texts of an independent model, messages and parts that did not change
// keep their identity, changed ones are new objects, and no view handed out
// earlier changes afterwards; at the end 'change' events told every text and
// the copy equals the module's own view field for field.

import assert from 'node:assert/strict';
import { test } from './harness/timed.js';
import { COMPACT, connect } from '../index.js';
import { decode, encode } from '../msgpack.js';
import { wasmPath } from './paths.js';

const SESSION = 's';

class ScriptedSocket {
  static last = null;
  constructor() {
    ScriptedSocket.last = this;
    queueMicrotask(() => this.onopen?.());
  }
  close() {}
}

// A small seeded generator (mulberry32): the same stream on every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const utf8 = new TextEncoder();
const ALPHABET = ['a', 'b', 'c', ' ', '\n', 'é', '日本', '🙂', 'xyzxyzxyz'];

function part(id, sequence, type, text) {
  return { part_id: id, sequence, type, step_id: 's1', state: 'streaming', ...(text ? { text } : {}) };
}

// Streams 3,000 random frames, `burst` at most in one go (1: one per task,
// each handled with its changes; more: the later ones of a burst are taken
// together at the next read of the view), checking the view after each go.
async function streamRandomly(t, seed, burst, schedule) {
  const random = rng(seed);
  // Six messages; m2 and m4 stream, each with a reasoning and a text part.
  const items = [];
  const model = new Map(); // message id -> its parts: {part_id, sequence, type, text}
  for (let s = 1; s <= 6; s++) {
    const streaming = s === 2 || s === 4;
    const parts = streaming ? [part('r', 1, 'reasoning', ''), part('t', 2, 'text', s === 4 ? 'already' : '')] : [part('t', 1, 'text', `done ${s}`)];
    if (!streaming) parts[0].state = 'done';
    items.push({ message_id: `m${s}`, session_id: SESSION, sequence: s, revision: 1, role: 'agent', state: streaming ? 'streaming' : 'done', turn_id: 't', visibility: 'visible', created_at: s, parts });
    model.set(`m${s}`, parts.map((p) => ({ part_id: p.part_id, sequence: p.sequence, type: p.type, text: p.text ?? '' })));
  }
  const textsOf = (id) => model.get(id).map((p) => p.text);
  const body = encode({ items, total: 6, start_sequence: 1, end_sequence: 6, has_more: false });
  const session = await connect({
    url: 'http://test.invalid', sessionId: SESSION, wasm: wasmPath, WebSocket: ScriptedSocket, wait: false,
    fetch: async () => new Response(body, { status: 200 }),
    schedule,
  });
  t.after(() => session.close());
  const ws = ScriptedSocket.last;
  await new Promise((r) => setTimeout(r, 0));
  // The compact answers (ABI v4) among the module's answers to frames.
  let compact = 0;
  const core = session.core;
  const handleCompact = core.handleCompact;
  core.handleCompact = function (data) {
    const res = handleCompact.call(this, data);
    if (res === COMPACT) compact++;
    return res;
  };
  let seq = 1;
  ws.onmessage({ data: encode([{ seq: seq++, kind: 'hello', protocol: 1, session_id: SESSION, head_sequence: 6 }]) });
  await session.waitFor((v) => v.status === 'live');

  // The texts rebuilt from 'change' events alone.
  const told = new Map([...model].map(([id]) => [id, textsOf(id)]));
  session.on('change', (c) => {
    assert.equal(c.reset, false);
    for (const mc of c.messages) {
      const texts = told.get(mc.message_id);
      for (const pc of mc.parts) texts[pc.index] = pc.appended !== undefined ? texts[pc.index] + pc.appended : pc.part.text ?? '';
    }
  });

  const streaming = ['m2', 'm4'];
  const kept = []; // [view, its texts then]: no view changes once handed out
  let prev = session.view;
  let longest = 0;
  for (let step = 0; step < 3000;) {
    const changed = new Map(); // message id -> indexes of the parts that changed
    for (let k = 1 + Math.floor(random() * burst); k > 0; k--, step++) {
      const id = streaming[Math.floor(random() * 2)];
      const parts = model.get(id);
      const r = random();
      let index = Math.floor(random() * parts.length);
      const held = parts[index];
      let frame;
      if (r < 0.97) {
        let text = '';
        for (let n = 1 + Math.floor(random() * 4); n > 0; n--) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
        frame = { kind: 'delta', message_id: id, revision: 1, part_id: held.part_id, offset: utf8.encode(held.text).length, text };
        held.text += text;
      } else if (r < 0.99 || parts.length >= 5) {
        // A change, never the same text: emptied, another text, or one that
        // continues the held text (the core passes on only the rest: kept_text).
        const r2 = random();
        const text = r2 < 0.3 && held.text !== '' ? '' : r2 < 0.65 ? `${held.text}+${step}` : `replaced ${step}`;
        frame = { kind: 'part', message_id: id, revision: 1, part: part(held.part_id, held.sequence, held.type, text) };
        held.text = text;
      } else {
        index = parts.length;
        parts.push({ part_id: `n${step}`, sequence: index + 1, type: 'text', text: '' });
        frame = { kind: 'part', message_id: id, revision: 1, part: part(`n${step}`, index + 1, 'text', '') };
      }
      ws.onmessage({ data: encode([{ seq: seq++, ...frame }]) });
      if (!changed.has(id)) changed.set(id, new Set());
      changed.get(id).add(index);
      longest = Math.max(longest, model.get(id)[index].text.length);
    }

    const view = session.view;
    assert.notEqual(view, prev, `step ${step}: a change makes a new view`);
    for (const m of view.messages) {
      assert.deepEqual(m.parts.map((p) => p.text ?? ''), textsOf(m.message_id), `step ${step}: texts of ${m.message_id}`);
      const before = prev.messages.find((x) => x.message_id === m.message_id);
      const indexes = changed.get(m.message_id);
      if (!indexes) {
        assert.equal(m, before, `step ${step}: ${m.message_id} did not change and keeps its identity`);
        continue;
      }
      assert.notEqual(m, before, `step ${step}: the changed message is a new object`);
      assert.notEqual(m.parts, before.parts, `step ${step}: with a new parts array`);
      m.parts.forEach((p, i) => {
        if (indexes.has(i)) assert.notEqual(p, before.parts[i], `step ${step}: a changed part is a new object`);
        else assert.equal(p, before.parts[i], `step ${step}: an unchanged part keeps its identity`);
      });
    }
    if (kept.length < step / 97) kept.push([view, view.messages.map((m) => m.parts.map((p) => p.text ?? ''))]);
    prev = view;
  }
  await new Promise((r) => setTimeout(r, 0)); // the last change events
  for (const [view, texts] of kept) {
    assert.deepEqual(view.messages.map((m) => m.parts.map((p) => p.text ?? '')), texts, 'a view handed out earlier is unchanged');
  }
  assert.deepEqual(told, new Map([...model].map(([id]) => [id, textsOf(id)])), 'change events tell every text');
  assert.ok(longest > 600, `the texts outgrow the host's tail chunk of 256 (longest ${longest})`);
  // Field for field what the module holds (a text field present or left out alike).
  assert.deepEqual(session.view.messages, decode(encode(session.core.view().messages)));
  assert.equal(session.core, core, 'no rebuild');
  session.close();
  return { compact };
}

test('random frames one per task: texts, identity, old views, change events, the module\'s view', async (t) => {
  const { compact } = await streamRandomly(t, 15, 1, (flush) => flush());
  // A delta to the message the one before went to comes back compact.
  assert.ok(compact > 1000, `compact answers: ${compact} of 3,000 frames`);
});

test('random frames in bursts, taken together at the next read of the view', async (t) => {
  await streamRandomly(t, 16, 5, 'microtask');
});
