// AgentsyncChatTransport driven by the real `ai` package's Chat
// (AbstractChat, what useChat wraps) against the real server: the reply
// streams from the kit's own sync (the module and its WebSocket), stop()
// stops the turn on the server, a reload shows the history and resumes a
// reply mid-stream with no character doubled, regenerate and edit make
// branches of the conversation tree, and a 200-message chat posts only the
// new message. Each message the chat builds must equal toUIMessages of the
// view a separate Session synced of the same session.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { AbstractChat, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { connect, createSession } from '../node.js';
import { AgentsyncChatTransport, loadUIMessages, toUIMessages } from '../ai.js';
import { startServer } from './harness/syncserver.js';

let server;
before(async () => {
  server = await startServer({ speed: '2ms' });
}, { timeout: 10 * 60 * 1000 });
after(() => server?.stop());

// The smallest ChatState: what @ai-sdk/react's keeps, without React.
class State {
  constructor(messages = []) {
    this.status = 'ready';
    this.error = undefined;
    this.messages = messages;
  }
  pushMessage(m) {
    this.messages = this.messages.concat(m);
  }
  popMessage() {
    this.messages = this.messages.slice(0, -1);
  }
  replaceMessage(i, m) {
    this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)];
  }
  snapshot(v) {
    return structuredClone(v);
  }
}

class Chat extends AbstractChat {
  constructor({ messages, ...opts }) {
    super({ ...opts, state: new State(messages) });
  }
}

// UIMessages are JSON: compare them as JSON (undefined fields dropped).
const json = (v) => JSON.parse(JSON.stringify(v));
const textOf = (m) => m?.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') ?? '';

async function waitUntil(what, ok, ms = 60000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

// A fetch that records every request the session makes (a counting proxy
// at the client's edge: the bodies are the bytes that go on the wire).
function recordingFetch() {
  const requests = [];
  const f = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input.url;
    requests.push({ method: init.method ?? 'GET', url, body: typeof init.body === 'string' ? init.body : init.body ? '<bytes>' : '' });
    return fetch(input, init);
  };
  return { fetch: f, requests };
}

// The view another Session synced of sessionId, once its last message is a
// done agent message.
async function serverView(sessionId) {
  const s = await connect({ url: server.url, sessionId });
  try {
    return await s.waitFor((v) => v.messages.at(-1)?.role === 'agent' && v.messages.at(-1).state === 'done', { timeoutMs: 60000 });
  } finally {
    s.close();
  }
}

test('transport: a reply streams through the synced view; the chat equals toUIMessages of the server', { timeout: 180000 }, async () => {
  const session = await createSession(server.url);
  const transport = new AgentsyncChatTransport({ session });
  try {
    const chat = new Chat({ id: session.sessionId, transport });
    const lengths = [];
    for (const scenario of ['text chars=600', 'tools city=Oslo', 'reasoning', 'data', 'file', 'markdown']) {
      await chat.sendMessage({ text: `scenario:${scenario}` });
      assert.equal(chat.status, 'ready', `${scenario}: ${chat.error}`);
      lengths.push(textOf(chat.messages.at(-1)).length);
      const want = toUIMessages(await serverView(session.sessionId));
      // The stream protocol has no file name (as with /v1/chat).
      for (const m of want) for (const p of m.parts) if (p.type === 'file') delete p.filename;
      // The user messages keep the chat's own ids; the replies are the server's.
      assert.deepEqual(json(chat.messages.filter((m) => m.role === 'assistant')), json(want.filter((m) => m.role === 'assistant')), scenario);
      assert.deepEqual(chat.messages.map((m) => textOf(m)), want.map((m) => textOf(m)), scenario);
    }
    assert.ok(lengths[0] === 600, `the text scenario streamed 600 chars (${lengths[0]})`);
  } finally {
    transport.session.close();
  }
});

test('transport: an approval granted the useChat way continues the reply; a question is answered through the kit', { timeout: 120000 }, async () => {
  const session = await createSession(server.url);
  const transport = new AgentsyncChatTransport({ session });
  try {
    const chat = new Chat({ id: session.sessionId, transport, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'scenario:approval' });
    const tool = chat.messages.at(-1).parts.find(isToolUIPart);
    assert.equal(tool?.state, 'approval-requested', JSON.stringify(chat.messages.at(-1)));
    await chat.addToolApprovalResponse({ id: tool.approval.id, approved: true });
    await waitUntil('the reply went on', () => chat.status === 'ready' && chat.messages.at(-1).parts.find(isToolUIPart)?.state === 'output-available');
    assert.match(textOf(chat.messages.at(-1)), /Done: the email was sent/);
    const want = toUIMessages(await serverView(session.sessionId)).at(-1);
    const got = json(chat.messages.at(-1));
    for (const p of got.parts) if (p.approval) delete p.approval.reason;
    assert.deepEqual(got, json(want));

    // A question: the stream stays open while the kit answers it.
    const sent = chat.sendMessage({ text: 'scenario:question' });
    await waitUntil('the question was asked', () => chat.messages.at(-1)?.parts.some((p) => p.type === 'data-agentsync-question' && p.data.status === 'pending'));
    const q = chat.messages.at(-1).parts.find((p) => p.type === 'data-agentsync-question');
    await transport.session.answer(q.id, { answer: 'blue' });
    await sent;
    assert.deepEqual(json(chat.messages.at(-1)), json(toUIMessages(await serverView(session.sessionId)).at(-1)));
    assert.match(textOf(chat.messages.at(-1)), /blue/);
  } finally {
    transport.session.close();
  }
});

test('transport: stop() stops the turn on the server; the message ends stopped', { timeout: 120000 }, async () => {
  const session = await createSession(server.url);
  const transport = new AgentsyncChatTransport({ session });
  try {
    const chat = new Chat({ id: session.sessionId, transport });
    const sent = chat.sendMessage({ text: 'scenario:long chars=200000 delta=25' });
    await waitUntil('some text streamed', () => textOf(chat.messages.at(-1)).length > 500);
    await chat.stop();
    await sent;
    assert.equal(chat.status, 'ready');
    const view = await serverView(session.sessionId);
    const agent = view.messages.at(-1);
    assert.ok(agent.parts.some((p) => p.type === 'action' && p.action_type === 'stop'), 'the turn closed with the stop action');
    const text = agent.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
    assert.ok(text.length < 200000, `stopped early (${text.length} of 200000)`);
    // Nothing streams any more: a reconnect finds no stream.
    assert.equal(await transport.reconnectToStream({ chatId: session.sessionId }), null);
    // The explicit helper: nothing runs, so it stops nothing.
    assert.equal(await transport.stop(), false);
  } finally {
    transport.session.close();
  }
});

test('transport: a dropped WebSocket mid-stream loses and doubles nothing; a resumed stream replaced by another stops nothing, its stop() stops the turn', { timeout: 180000 }, async () => {
  const CHARS = 60000;
  const session = await createSession(server.url);
  const transport = new AgentsyncChatTransport({ session });
  let other;
  try {
    const chat = new Chat({ id: session.sessionId, transport });
    const sent = chat.sendMessage({ text: `scenario:long chars=${CHARS} delta=25` });
    await waitUntil('some text streamed', () => textOf(chat.messages.at(-1)).length > 2000);
    assert.ok(session.dropConnection(), 'a socket to drop');
    const at = textOf(chat.messages.at(-1)).length;
    await waitUntil('more text after the reconnect', () => textOf(chat.messages.at(-1)).length > at + 2000);
    assert.ok(session.dropConnection(), 'a socket to drop again');
    await sent;
    assert.equal(chat.status, 'ready', String(chat.error));
    const want = toUIMessages(await serverView(session.sessionId)).at(-1);
    assert.equal([...textOf(chat.messages.at(-1))].length, CHARS);
    assert.deepEqual(json(chat.messages.at(-1)), json(want));

    // Another tab resumes a reply; its second resumeStream replaces the
    // first (an abort in the same task): the turn runs on.
    const sent2 = chat.sendMessage({ text: `scenario:long chars=200000 delta=25` });
    await waitUntil('the second reply streams', () => chat.messages.length === 4 && textOf(chat.messages.at(-1)).length > 500);
    const rec = recordingFetch();
    const tab = await connect({ url: server.url, sessionId: session.sessionId, fetch: rec.fetch });
    other = new AgentsyncChatTransport({ session: tab });
    const chat2 = new Chat({ id: session.sessionId, transport: other, messages: (await other.loadMessages()).messages });
    const first = chat2.resumeStream();
    const second = chat2.resumeStream();
    await first;
    await waitUntil('the replacing stream goes on', () => textOf(chat2.messages.at(-1)).length > textOf(chat.messages.at(-1)).length - 5000 && chat2.status === 'streaming');
    // Let a deferred stop run, if one was (wrongly) due.
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(rec.requests.filter((r) => r.method === 'POST'), [], 'a replaced resume sent no stop');
    assert.equal(tab.view.messages.at(-1).state, 'streaming', 'a replaced resume stopped nothing');
    await chat2.stop();
    await second;
    await sent2;
    const stopped = (await serverView(session.sessionId)).messages.at(-1);
    assert.ok(stopped.parts.some((p) => p.type === 'action' && p.action_type === 'stop'), "the resumed stream's stop() stopped the turn");
  } finally {
    transport.session.close();
    other?.session.close();
  }
});

test('transport: a reload shows the history and resumes a reply mid-stream without a doubled character', { timeout: 180000 }, async () => {
  const CHARS = 50000; // 2,000 deltas of 25: 4 s of streaming, the reload comes after 2,000 characters
  const session = await createSession(server.url);
  const transport = new AgentsyncChatTransport({ session });
  let reloaded;
  try {
    const chat = new Chat({ id: session.sessionId, transport });
    await chat.sendMessage({ text: 'scenario:text chars=300' });
    const sent = chat.sendMessage({ text: `scenario:long chars=${CHARS} delta=25` });
    await waitUntil('some text streamed', () => textOf(chat.messages.at(-1)).length > 2000);
    // The page goes away (no abort: a reload stops nothing).
    transport.session.close();
    await sent.catch(() => {});

    // The new page: a new Session, the history, a new chat that resumes.
    const next = await connect({ url: server.url, sessionId: session.sessionId });
    const transport2 = new AgentsyncChatTransport({ session: next });
    reloaded = transport2;
    const history = await transport2.loadMessages({ limit: 50 });
    assert.equal(history.messages.length, 4, 'two user messages and two replies');
    const partial = textOf(history.messages.at(-1)).length;
    assert.ok(partial < CHARS, `the history holds the reply as it was (${partial} chars)`);
    const chat2 = new Chat({ id: session.sessionId, transport: transport2, messages: history.messages });
    assert.equal(textOf(chat2.messages[1]), textOf(chat.messages[1]), 'the first reply shows after the reload');
    await chat2.resumeStream();
    assert.equal(chat2.status, 'ready', String(chat2.error));
    assert.equal(chat2.messages.length, 4, 'the resumed reply replaced the partial one');
    const got = chat2.messages.at(-1);
    const gotText = textOf(got);
    assert.equal([...gotText].length, CHARS, 'every character once');
    const want = toUIMessages(await serverView(session.sessionId));
    assert.equal(gotText, textOf(want.at(-1)));
    assert.deepEqual(json(got), json(want.at(-1)));
    assert.deepEqual(json(chat2.messages), json(want), 'the whole chat equals the server');
  } finally {
    session.close();
    reloaded?.session.close();
  }
});

test('transport: regenerate and edit make branches; switching shows each path', { timeout: 180000 }, async () => {
  const session = await createSession(server.url);
  const root = session.sessionId;
  const switched = [];
  const transport = new AgentsyncChatTransport({ session, onSessionChange: (s) => switched.push(s.sessionId) });
  try {
    const chat = new Chat({ id: root, transport });
    await chat.sendMessage({ text: 'first question' });
    await chat.sendMessage({ text: 'second question' });
    const original = chat.messages.at(-1);

    await chat.regenerate();
    assert.equal(chat.status, 'ready', String(chat.error));
    assert.equal(switched.length, 1, 'the transport moved to the fork');
    const regen = chat.messages.at(-1);
    assert.notEqual(regen.id, original.id);
    assert.notEqual(textOf(regen), textOf(original), 'a new take');
    const fork = transport.session.sessionId;
    assert.notEqual(fork, root);
    assert.equal(transport.chatId, root, "useChat's id stays the session the chat opened");
    const b = await transport.branches(regen.id);
    assert.deepEqual(b.items.map((x) => x.session_id), [root, fork]);
    assert.equal(b.index, 1);
    assert.deepEqual(json(chat.messages.filter((m) => m.role === 'assistant')), json(toUIMessages(await serverView(fork)).filter((m) => m.role === 'assistant')));

    // Edit the second question (a fork keeps at least the first message):
    // a fork of the regenerated path before it, with the new text.
    const second = chat.messages[2];
    await chat.sendMessage({ text: 'second question, edited', messageId: second.id });
    assert.equal(chat.status, 'ready', String(chat.error));
    assert.equal(chat.messages.length, 4);
    const edit = transport.session.sessionId;
    assert.equal(switched.length, 2);
    assert.notEqual(edit, fork);
    const editView = await serverView(edit);
    assert.deepEqual(chat.messages.map(textOf), toUIMessages(editView).map(textOf));
    assert.equal(textOf(chat.messages[2]), 'second question, edited');
    assert.match(textOf(chat.messages[3]), /second question, edited/);
    const alts = await transport.branches(chat.messages[2].id);
    assert.equal(alts.items.length, 2, 'two versions of the second question');
    assert.equal(alts.items[alts.index].session_id, edit);

    // Switch back to the root path: its history is the original.
    await transport.switchBranch(root);
    const page = await transport.loadMessages();
    chat.messages = page.messages;
    assert.deepEqual(chat.messages.map(textOf), toUIMessages(await serverView(root)).map(textOf));
    assert.equal(textOf(chat.messages.at(-1)), textOf(original));
    assert.deepEqual(page.branches.map((x) => [x.sequence, x.count, x.index]), [[3, 2, 0], [4, 2, 0]]);
  } finally {
    transport.session.close();
  }
});

test('transport: a 200-message chat posts only the new message', { timeout: 300000 }, async () => {
  const rec = recordingFetch();
  const session = await createSession(server.url, { fetch: rec.fetch });
  try {
    // 100 turns through the kit: 200 messages on the server.
    for (let i = 0; i < 100; i++) {
      await session.send(`scenario:text chars=20 n=${i}`);
      await session.waitFor((v) => v.messages.length === 2 * (i + 1) && v.messages.at(-1).state === 'done', { timeoutMs: 60000 });
    }
    const transport = new AgentsyncChatTransport({ session });
    const history = await transport.loadMessages({ limit: 200 });
    assert.equal(history.messages.length, 200);
    const chat = new Chat({ id: session.sessionId, transport, messages: history.messages });
    rec.requests.length = 0;
    await chat.sendMessage({ text: 'scenario:text chars=50' });
    assert.equal(chat.status, 'ready', String(chat.error));
    assert.equal(chat.messages.length, 202);
    const posts = rec.requests.filter((r) => r.method === 'POST');
    assert.equal(posts.length, 1, JSON.stringify(rec.requests));
    assert.match(posts[0].url, /\/v1\/sessions\/[^/]+\/messages$/);
    assert.deepEqual(JSON.parse(posts[0].body), { parts: [{ type: 'text', text: 'scenario:text chars=50' }] });
    assert.ok(posts[0].body.length < 100, `the body is ${posts[0].body.length} bytes`);
    const view = await serverView(session.sessionId);
    assert.equal(view.total, 202, 'the server holds the 200 and the new pair, nothing more');
  } finally {
    session.close();
  }
});

test('loadUIMessages pages older history', { timeout: 120000 }, async () => {
  const session = await createSession(server.url);
  try {
    for (let i = 0; i < 3; i++) {
      await session.send(`scenario:text chars=10 n=${i}`);
      await session.waitFor((v) => v.messages.length === 2 * (i + 1) && v.messages.at(-1).state === 'done', { timeoutMs: 60000 });
    }
    const newest = await loadUIMessages(session, { limit: 4 });
    assert.equal(newest.messages.length, 4);
    assert.equal(newest.hasMore, true);
    const older = await loadUIMessages(session, { limit: 4, before: newest.before });
    assert.equal(older.hasMore, false);
    assert.equal(older.before, undefined);
    assert.deepEqual(json([...older.messages, ...newest.messages]), json(toUIMessages(session.view)));
  } finally {
    session.close();
  }
});

// The emitter alone: states of one message, streamed step by step or
// replayed from a late start, build the same UIMessage in the AI SDK's own
// reader, and equal toUIMessage of the last state; no text is sent twice.
test('ChunkEmitter: step by step and a late replay build toUIMessage of the message', async () => {
  const { ChunkEmitter } = await import('../ai.js');
  const { readUIMessageStream } = await import('ai');
  const base = { message_id: 'm1', session_id: 's', sequence: 2, revision: 1, role: 'agent', visibility: 'visible', created_at: 0 };
  const text = (t, state) => ({ part_id: 'p1', sequence: 1, type: 'text', text: t, state });
  const tool = (state, extra = {}) => ({ part_id: 'p2', sequence: 2, type: 'tool', tool_call_id: 'c1', tool_name: 'get_weather', state, input: { city: 'Oslo' }, ...extra });
  const data = (v) => ({ part_id: 'p3', sequence: 3, type: 'data', data_type: 'chart', data_id: 'ch', data: { v } });
  const states = [
    { ...base, state: 'streaming', parts: [text('Héllo', 'streaming')] },
    { ...base, state: 'streaming', parts: [text('Héllo, wörld', 'streaming')] },
    { ...base, state: 'streaming', parts: [text('Héllo, wörld.', 'done'), tool('input-streaming')] },
    { ...base, state: 'streaming', parts: [text('Héllo, wörld.', 'done'), tool('running'), data(1)] },
    { ...base, state: 'streaming', parts: [text('Héllo, wörld.', 'done'), tool('output-available', { output: { t: 5 } }), data(2)] },
    { ...base, state: 'done', parts: [text('Héllo, wörld.', 'done'), tool('output-available', { output: { t: 5 } }), data(2)] },
  ];
  const read = async (chunks) => {
    const stream = new ReadableStream({
      start(c) {
        for (const x of chunks) c.enqueue(x);
        c.close();
      },
    });
    let last;
    for await (const m of readUIMessageStream({ stream, terminateOnError: true })) last = m;
    return last;
  };
  const want = json(toUIMessages({ messages: [states.at(-1)] })[0]);
  for (const from of [0, 1, 3, 5]) {
    const e = new ChunkEmitter();
    const chunks = states.slice(from).flatMap((s) => e.emit(s));
    const deltas = chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('');
    assert.equal(deltas, 'Héllo, wörld.', `from ${from}: every character once`);
    assert.equal(chunks.filter((c) => c.type === 'data-chart').length, Math.min(2, states.length - Math.max(from, 3)), `from ${from}: a data part is sent again only when it changed`);
    assert.deepEqual(json(await read(chunks)), want, `from state ${from}`);
  }
});
