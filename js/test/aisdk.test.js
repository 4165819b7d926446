// The server's AI SDK endpoint driven by the real `ai` package, as useChat
// drives it: DefaultChatTransport posts a message and reads the UI message
// stream, readUIMessageStream builds the UIMessage, an approval goes back as
// useChat sends it, and a reconnect in the middle of a stream (a reload)
// resumes it. Each result must equal
// toUIMessages of the view an agentsync Session synced of the same session.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { DefaultChatTransport, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream } from 'ai';
import { createSession } from '../node.js';
import { toUIMessages } from '../ai.js';
import { startServer } from './harness/syncserver.js';

let server;
before(async () => {
  server = await startServer({ speed: '2ms' });
}, { timeout: 10 * 60 * 1000 });
after(() => server?.stop());

// UIMessages are JSON (persisted, posted back): compare them as JSON, where
// a field set to undefined and a field left out are the same.
const json = (v) => JSON.parse(JSON.stringify(v));

let userIds = 0;
const userMessage = (text) => ({ id: `u${++userIds}`, role: 'user', parts: [{ type: 'text', text }] });

// Reads a UI message stream to its end; onUpdate sees every state.
// message is what the client already has of a message the stream continues.
async function readAll(stream, onUpdate = () => {}, message = undefined) {
  let last;
  for await (const m of readUIMessageStream({ message, stream, terminateOnError: true })) {
    last = m;
    await onUpdate(m);
  }
  return last;
}

// The synced view's UIMessage of the given id, once that message is done.
async function synced(session, id) {
  const view = await session.waitFor((v) => v.messages.some((m) => m.message_id === id && m.state === 'done'));
  return toUIMessages(view).find((m) => m.id === id);
}

// An approval as useChat makes it: the stream ends on the request, the app
// calls addToolApprovalResponse, and useChat posts the assistant message
// back (sendAutomaticallyWhen); the reply then streams on in that message.
for (const approved of [true, false]) {
  test(`useChat transport: an approval ${approved ? 'granted' : 'denied'} the useChat way continues the reply`, { timeout: 120000 }, async () => {
    const session = await createSession(server.url, { WebSocket: globalThis.WebSocket });
    try {
      const transport = new DefaultChatTransport({ api: `${server.url}/v1/chat` });
      const chatId = session.sessionId;
      const user = userMessage('scenario:approval');
      const send = (messages, messageId, abortSignal) => transport.sendMessages({ chatId, messages, trigger: 'submit-message', messageId, abortSignal });

      const asked = await readAll(await send([user]));
      const tool = asked.parts.find(isToolUIPart);
      assert.equal(tool?.state, 'approval-requested', JSON.stringify(asked.parts));
      // What addToolApprovalResponse does to the message:
      const answered = {
        ...asked,
        parts: asked.parts.map((p) => (p === tool ? { ...p, state: 'approval-responded', approval: { ...p.approval, approved, reason: undefined } } : p)),
      };
      assert.ok(lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [user, answered] }));

      const states = [];
      const reply = await readAll(await send([user, answered], answered.id), (m) => {
        const t = m.parts.find(isToolUIPart);
        if (states.at(-1) !== t.state) states.push(t.state);
      }, answered);
      assert.deepEqual(states, [approved ? 'output-available' : 'output-denied']);
      assert.equal(reply.id, asked.id, 'the same assistant message, continued');
      assert.deepEqual(json(reply), json(await synced(session, reply.id)));
      const last = reply.parts.at(-1);
      assert.match(last.text, approved ? /^Done: the email was sent/ : /^Understood: I did not send the email/);
      // Nothing streams now: a reconnect finds no active stream (204).
      assert.equal(await transport.reconnectToStream({ chatId }), null);
    } finally {
      session.close();
    }
  });
}

test('useChat transport: a reload mid-stream resumes with what was streamed so far', { timeout: 120000 }, async () => {
  const session = await createSession(server.url, { WebSocket: globalThis.WebSocket });
  try {
    const transport = new DefaultChatTransport({ api: `${server.url}/v1/chat` });
    const chars = 50000; // 2,000 deltas of 25: 4 s of streaming, the cut comes after 2,000 characters
    const abort = new AbortController();
    const stream = await transport.sendMessages({
      chatId: session.sessionId,
      messages: [userMessage(`scenario:long chars=${chars} delta=25`)],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: abort.signal,
    });
    // Read until some text arrived, then drop the request as a reload does.
    let seen = 0;
    for await (const m of readUIMessageStream({ stream })) {
      seen = m.parts.find((p) => p.type === 'text')?.text.length ?? 0;
      if (seen > 2000) break;
    }
    abort.abort();
    assert.ok(seen > 2000 && seen < chars, `cut mid-stream at ${seen} chars`);

    const resumed = await transport.reconnectToStream({ chatId: session.sessionId });
    assert.ok(resumed, 'the reply is still streaming: a stream to resume');
    let first;
    // The first text the resumed stream delivers is everything so far, in one delta.
    const reply = await readAll(resumed, (m) => {
      const len = m.parts.find((p) => p.type === 'text')?.text.length ?? 0;
      if (len > 0) first ??= len;
    });
    assert.ok(first >= seen, `the resumed stream starts with what was streamed so far (${first} ≥ ${seen} chars)`);
    const text = reply.parts.find((p) => p.type === 'text');
    assert.equal([...text.text].length, chars);
    assert.equal(text.state, 'done');
    assert.deepEqual(json(reply), json(await synced(session, reply.id)));
  } finally {
    session.close();
  }
});

// Every kind of part through the stream: tools, reasoning, data, file, a
// question answered meanwhile. The stream protocol has no file name, so a
// file part read through useChat lacks the filename toUIMessages keeps.
test('useChat transport: every scenario streams what toUIMessages gives', { timeout: 180000 }, async () => {
  const session = await createSession(server.url, { WebSocket: globalThis.WebSocket });
  try {
    const transport = new DefaultChatTransport({ api: `${server.url}/v1/chat` });
    for (const scenario of ['tools city=Oslo', 'reasoning', 'data', 'file', 'question', 'text chars=300']) {
      const stream = await transport.sendMessages({
        chatId: session.sessionId,
        messages: [userMessage(`scenario:${scenario}`)],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      });
      const answered = new Set();
      const reply = await readAll(stream, async (m) => {
        for (const p of m.parts) {
          if (p.type === 'data-agentsync-question' && p.data.status === 'pending' && !answered.has(p.id)) {
            answered.add(p.id);
            await session.answer(p.id, { answer: 'blue' });
          }
        }
      });
      const want = json(await synced(session, reply.id));
      for (const p of want.parts) if (p.type === 'file') delete p.filename;
      assert.deepEqual(json(reply), want, scenario);
    }
  } finally {
    session.close();
  }
});

test('the chat endpoint refuses a bad body with a typed error', async () => {
  const res = await fetch(`${server.url}/v1/chat`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: 'nope', messages: [] }),
  });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).code, 'bad_request');
  const missing = await fetch(`${server.url}/v1/chat`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: 'no-such-session', messages: [userMessage('hi')] }),
  });
  assert.equal(missing.status, 404);
  const session = await createSession(server.url, { WebSocket: globalThis.WebSocket });
  try {
    const noDecision = await fetch(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: session.sessionId, messages: [{ id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }),
    });
    assert.equal(noDecision.status, 400);
    assert.match((await noDecision.json()).message, /no approval response/);
  } finally {
    session.close();
  }
});

test('toUIMessages keeps an unchanged message\'s UIMessage object', () => {
  const done = { message_id: 'm1', role: 'user', parts: [{ part_id: 'p1', sequence: 1, type: 'text', text: 'hi' }] };
  const streaming = { message_id: 'm2', role: 'agent', state: 'streaming', parts: [{ part_id: 'p2', sequence: 1, type: 'text', text: 'a', state: 'streaming' }] };
  const first = toUIMessages({ messages: [done, streaming] });
  const next = toUIMessages({ messages: [done, { ...streaming, parts: [{ ...streaming.parts[0], text: 'ab' }] }] });
  assert.equal(next[0], first[0], 'same message object, same UIMessage');
  assert.notEqual(next[1], first[1]);
  assert.deepEqual(next[1].parts, [{ type: 'text', text: 'ab', state: 'streaming' }]);
});
