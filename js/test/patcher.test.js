// The view patcher without a server: a commit that keeps the texts the host
// holds (kept_texts, protocol §4.5 and §7.4) fed to the patcher as a take of
// changes, and fed as frames through the real module behind a scripted
// socket. The held text is put back in front of the rest the commit
// carries, messages the commit did not touch keep their identity, and a
// kept text of a message the copy lacks makes the owner rebuild.

import assert from 'node:assert/strict';
import { test } from './harness/timed.js';
import { connect } from '../index.js';
import { decode, encode } from '../msgpack.js';
import { ViewPatcher } from '../patcher.js';
import { wasmPath } from './paths.js';

const SESSION = 's';
const utf8 = new TextEncoder();

function message(id, sequence, revision, state, parts) {
  return { message_id: id, session_id: SESSION, sequence, revision, role: 'agent', state, turn_id: 't1', visibility: 'visible', created_at: sequence, parts };
}

function textPart(id, sequence, type, text, state) {
  return { part_id: id, sequence, type, step_id: 's1', state, ...(text ? { text } : {}) };
}

// A patcher holding two messages; u1 a done one, a1 streaming a
// reasoning part and a text part.
function patcherWithTwo() {
  const unknown = [];
  const p = new ViewPatcher(SESSION, new Map([['change', new Set([() => {}])]]), (id) => unknown.push(id));
  p.status = 'live';
  const held = [
    message('u1', 1, 1, 'done', [textPart('u', 1, 'text', 'question', 'done')]),
    message('a1', 2, 1, 'streaming', [textPart('r', 1, 'reasoning', 'thinking', 'streaming'), textPart('t', 2, 'text', 'Hello wor', 'streaming')]),
  ];
  assert.equal(p.apply({ status: 'live', reset: true, total: 2, messages: held.map((m) => ({ message_id: m.message_id, message: m })) }), true);
  p.takeChanges();
  return { p, unknown };
}

test('a commit with kept_texts puts the held texts back in front of the rest', () => {
  const { p, unknown } = patcherWithTwo();
  const before = p.view;
  // The commit: the reasoning text unchanged (nothing after the held 8
  // bytes), the text continued by "ld!"; both kept.
  const commit = message('a1', 2, 2, 'done', [textPart('r', 1, 'reasoning', '', 'done'), textPart('t', 2, 'text', 'ld!', 'done')]);
  const changed = p.apply({ status: 'live', total: 2, messages: [{ message_id: 'a1', message: commit, kept_texts: ['r', 't'] }] });
  assert.equal(changed, true);
  assert.deepEqual(unknown, []);
  const view = p.view;
  assert.notEqual(view, before, 'a new view');
  const [u1, a1] = view.messages;
  assert.equal(u1, before.messages[0], 'the message the commit did not touch keeps its identity');
  assert.equal(a1.state, 'done');
  assert.equal(a1.revision, 2);
  assert.deepEqual(
    a1.parts.map((x) => [x.part_id, x.text, x.state]),
    [
      ['r', 'thinking', 'done'],
      ['t', 'Hello world!', 'done'],
    ],
  );
  assert.deepEqual(
    before.messages[1].parts.map((x) => x.text),
    ['thinking', 'Hello wor'],
    'the view handed out before is unchanged',
  );
  const [change] = p.takeChanges();
  assert.equal(change.reset, false);
  assert.deepEqual(
    change.messages.map((m) => [m.message_id, m.message, m.parts.map((x) => [x.index, x.part.text, x.appended])]),
    [['a1', a1, [[0, 'thinking', undefined], [1, 'Hello world!', undefined]]]],
    'the change tells the message taken whole',
  );
});

test('a kept text of a message or part the copy lacks is a host bug: the owner rebuilds', () => {
  {
    const { p, unknown } = patcherWithTwo();
    const before = p.view;
    const stray = message('a9', 3, 1, 'done', [textPart('t', 1, 'text', 'rest', 'done')]);
    assert.equal(p.apply({ status: 'live', total: 3, messages: [{ message_id: 'a9', message: stray, kept_texts: ['t'] }] }), false);
    assert.deepEqual(unknown, ['a9']);
    assert.equal(p.view, before, 'nothing patched');
  }
  {
    const { p, unknown } = patcherWithTwo();
    const commit = message('a1', 2, 2, 'done', [textPart('x', 1, 'text', 'rest', 'done')]);
    assert.equal(p.apply({ status: 'live', total: 2, messages: [{ message_id: 'a1', message: commit, kept_texts: ['x'] }] }), false);
    assert.deepEqual(unknown, ['a1'], 'a part the held message lacks');
  }
});

class ScriptedSocket {
  static last = null;
  constructor() {
    ScriptedSocket.last = this;
    this.closed = false;
    queueMicrotask(() => this.onopen?.());
  }
  close() {
    this.closed = true;
  }
}

test('a commit with kept frames through the real module, no server', async (t) => {
  const held = [
    message('u1', 1, 1, 'done', [textPart('u', 1, 'text', 'question', 'done')]),
    message('a1', 2, 1, 'streaming', [textPart('r', 1, 'reasoning', 'thinking', 'streaming'), textPart('t', 2, 'text', 'Hello', 'streaming')]),
  ];
  const body = encode({ items: held, total: 2, start_sequence: 1, end_sequence: 2, has_more: false });
  const session = await connect({
    url: 'http://test.invalid',
    sessionId: SESSION,
    wasm: wasmPath,
    WebSocket: ScriptedSocket,
    wait: false,
    fetch: async () => new Response(body, { status: 200 }),
  });
  t.after(() => session.close());
  const ws = ScriptedSocket.last;
  let seq = 1;
  const send = (...frames) => ws.onmessage({ data: encode(frames.map((f) => ({ seq: seq++, ...f }))) });
  await new Promise((r) => setImmediate(r)); // the socket opened
  send({ kind: 'hello', protocol: 1, session_id: SESSION, head_sequence: 2 });
  await session.waitFor((v) => v.status === 'live');
  send({ kind: 'delta', message_id: 'a1', revision: 1, part_id: 't', offset: utf8.encode('Hello').length, text: ', wörld' });
  assert.equal(session.view.messages[1].parts[1].text, 'Hello, wörld');
  const before = session.view;

  const changes = [];
  session.on('change', (c) => changes.push(c));
  // The commit sends only what follows the held bytes of both texts.
  const commit = message('a1', 2, 2, 'done', [textPart('r', 1, 'reasoning', '', 'done'), textPart('t', 2, 'text', '!', 'done')]);
  send({
    kind: 'message',
    message: commit,
    kept: [
      { part_id: 'r', len: utf8.encode('thinking').length },
      { part_id: 't', len: utf8.encode('Hello, wörld').length },
    ],
  });
  const view = await session.waitFor((v) => v.messages[1]?.state === 'done');
  assert.equal(session.status, 'live', 'no resync: the kept lengths matched');
  assert.equal(session.rebuilds, 0);
  assert.equal(view.messages[0], before.messages[0], 'the untouched message keeps its identity');
  assert.deepEqual(
    view.messages[1].parts.map((x) => [x.part_id, x.text, x.state]),
    [
      ['r', 'thinking', 'done'],
      ['t', 'Hello, wörld!', 'done'],
    ],
  );
  assert.equal(before.messages[1].parts[1].text, 'Hello, wörld', 'the view handed out before is unchanged');
  // Field for field what the module holds.
  assert.deepEqual(view.messages, decode(encode(session.core.view().messages)));
  await new Promise((r) => setImmediate(r)); // the change events
  const told = changes.flatMap((c) => c.messages).filter((m) => m.message_id === 'a1');
  assert.equal(told.at(-1).message, view.messages[1], 'a change event told the committed message');
  assert.equal(ws.closed, false, 'the subscription stayed open');
});
