// The server's AG-UI endpoint (docs/ag-ui.md) driven by the real
// @ag-ui/client HttpAgent, as an AG-UI front end drives it: a tool loop,
// an approval interrupt resumed by the next run, a connection cut in the
// middle of an answer and the run that picks it up. After each, the
// messages HttpAgent assembled must equal the AG-UI form of the session's
// messages as the HTTP messages API reads them.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { startServer } from './harness/syncserver.js';

let server;
before(async () => {
  server = await startServer({ speed: '2ms' });
}, { timeout: 10 * 60 * 1000 });
after(() => server?.stop());

const json = (v) => JSON.parse(JSON.stringify(v));

// ---- The AG-UI form of agentsync messages, written from docs/ag-ui.md
// (independently of the server's Go), for the parts these tests make.

function userOf(m) {
  const texts = m.parts.filter((p) => p.type === 'text').map((p) => p.text);
  return { id: m.message_id, role: 'user', content: texts.join('\n\n') };
}

function resultContent(p) {
  if (p.state === 'output-error') return typeof p.output?.error === 'string' ? p.output.error : JSON.stringify(p.output);
  return typeof p.output === 'string' ? p.output : JSON.stringify(p.output);
}

function agentOf(out, m) {
  let current = '';
  let anchored = false;
  let sawTool = false;
  for (const p of m.parts) {
    if (p.type === 'text') {
      current = !anchored && !sawTool ? m.message_id : `${m.message_id}:${p.part_id}`;
      anchored = true;
      out.push({ id: current, role: 'assistant', content: p.text ?? '' });
    } else if (p.type === 'reasoning') {
      out.push({ id: `${m.message_id}:${p.part_id}`, role: 'reasoning', content: p.text ?? '' });
    } else if (p.type === 'tool') {
      sawTool = true;
      if (!current) current = m.message_id;
      let parent = out.find((x) => x.id === current);
      if (!parent) out.push((parent = { id: current, role: 'assistant', toolCalls: [] }));
      const id = `${m.message_id}:${p.tool_call_id}`;
      (parent.toolCalls ??= []).push({ id, type: 'function', function: { name: p.tool_name, arguments: p.state === 'input-streaming' ? '' : JSON.stringify(p.input ?? {}) } });
      if (['output-available', 'output-error', 'output-denied'].includes(p.state)) {
        let k = out.indexOf(parent) + 1;
        while (k < out.length && out[k].role === 'tool') k++;
        out.splice(k, 0, { id: `${id}:result`, role: 'tool', toolCallId: id, content: resultContent(p) });
      }
    } else if (p.type === 'data') {
      out.push({ id: `${m.message_id}:${p.part_id}`, role: 'activity', activityType: 'agentsync-data',
        content: { data_type: p.data_type, data: p.data, ...(p.data_id ? { data_id: p.data_id } : {}) } });
    }
  }
}

/** The session's messages (GET /v1/sessions/{id}/messages) in AG-UI form. */
async function syncedView(sessionId) {
  const res = await fetch(`${server.url}/v1/sessions/${encodeURIComponent(sessionId)}/messages?limit=200`, { headers: { Accept: 'application/json' } });
  assert.equal(res.status, 200);
  const page = await res.json();
  const out = [];
  for (const m of page.items) {
    if (m.role === 'user') out.push(userOf(m));
    else agentOf(out, m);
  }
  return { messages: out, items: page.items };
}

function newAgent(threadId = `thread-${randomUUID()}`) {
  return new HttpAgent({ url: `${server.url}/v1/agui`, threadId });
}

function say(agent, text) {
  agent.addMessage({ id: randomUUID(), role: 'user', content: text });
}

// Records the type of every event a run applies.
function recorder() {
  const types = [];
  return { types, subscriber: { onEvent: ({ event }) => { types.push(event.type); } } };
}

test('HttpAgent: a tool loop streams into the messages the session holds', { timeout: 120000 }, async () => {
  const agent = newAgent();
  say(agent, 'scenario:tools city=Oslo');
  const rec = recorder();
  await agent.runAgent({}, rec.subscriber);
  assert.equal(rec.types[0], 'RUN_STARTED');
  assert.equal(rec.types[1], 'MESSAGES_SNAPSHOT');
  assert.equal(rec.types.at(-1), 'RUN_FINISHED');
  for (const t of ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']) {
    assert.ok(rec.types.includes(t), `no ${t} in ${rec.types.join(' ')}`);
  }
  assert.deepEqual(agent.pendingInterrupts, []);
  const { messages } = await syncedView(agent.threadId);
  assert.deepEqual(json(agent.messages), json(messages));
  assert.equal(messages.filter((m) => m.role === 'tool').length, 2);
  assert.match(messages.at(-1).content, /^In Oslo it is/);
  const calls = messages.flatMap((m) => m.toolCalls ?? []);
  assert.deepEqual(calls.map((c) => c.function.name), ['get_weather', 'calculator']);

  // A second run posts only the new message (HttpAgent sends them all).
  say(agent, 'hello again');
  await agent.runAgent();
  const after = await syncedView(agent.threadId);
  assert.deepEqual(json(agent.messages), json(after.messages));
  assert.deepEqual(after.items.map((m) => m.role), ['user', 'agent', 'user', 'agent']);
});

for (const approved of [true, false]) {
  test(`HttpAgent: an approval interrupt ${approved ? 'granted' : 'denied'} by the next run's resume`, { timeout: 120000 }, async () => {
    const agent = newAgent();
    say(agent, 'scenario:approval');
    let outcome;
    await agent.runAgent({}, { onRunFinishedEvent: (e) => { outcome = e.outcome; } });
    assert.equal(outcome, 'interrupt');
    assert.equal(agent.pendingInterrupts.length, 1);
    const [interrupt] = agent.pendingInterrupts;
    assert.equal(interrupt.reason, 'approval');
    const before = await syncedView(agent.threadId);
    assert.deepEqual(json(agent.messages), json(before.messages));
    const call = before.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === interrupt.toolCallId);
    assert.equal(call?.function.name, 'send_email');

    // HttpAgent refuses a run that leaves the interrupt unanswered.
    await assert.rejects(agent.runAgent(), /pending interrupt/);

    // A reload (a new agent on the same thread) is told of it too.
    const reloaded = newAgent(agent.threadId);
    await reloaded.runAgent();
    assert.deepEqual(reloaded.pendingInterrupts.map((i) => i.id), [interrupt.id]);
    assert.deepEqual(json(reloaded.messages), json(before.messages));

    await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved } }] });
    assert.deepEqual(agent.pendingInterrupts, []);
    const { messages, items } = await syncedView(agent.threadId);
    assert.equal(items.at(-1).state, 'done');
    assert.deepEqual(json(agent.messages), json(messages));
    const result = messages.find((m) => m.role === 'tool' && m.toolCallId === interrupt.toolCallId);
    assert.ok(result, 'the tool result is in the messages');
    assert.match(messages.at(-1).content, approved ? /^Done: the email was sent/ : /^Understood: I did not send the email/);
  });
}

test('HttpAgent: a connection cut mid-answer, then a run that picks it up: no character lost or doubled', { timeout: 120000 }, async () => {
  const agent = newAgent();
  say(agent, 'scenario:long chars=20000 delta=7');
  let contents = 0;
  let before = '';
  await agent.runAgent({}, {
    onTextMessageContentEvent: ({ textMessageBuffer, event }) => {
      before = textMessageBuffer + event.delta;
      if (++contents === 30) agent.abortRun();
    },
  });
  assert.ok(contents >= 30 && before.length > 0, `${contents} content events`);
  const partial = agent.messages.at(-1);
  assert.equal(partial.role, 'assistant');
  assert.ok(partial.content.length < 20000, 'the cut came before the end');

  // The server kept streaming; a run with no new message resumes.
  const rec = recorder();
  let snapshotText;
  await agent.runAgent({}, {
    ...rec.subscriber,
    onMessagesSnapshotEvent: ({ event }) => { snapshotText = event.messages.at(-1).content; },
  });
  assert.ok(snapshotText.startsWith(partial.content), `the snapshot continues what the client had: ${JSON.stringify(partial).slice(0, 300)} / ${JSON.stringify(snapshotText).slice(0, 300)}`);
  const { messages, items } = await syncedView(agent.threadId);
  assert.equal(items.at(-1).state, 'done');
  assert.equal([...items.at(-1).parts[0].text].length, 20000);
  assert.deepEqual(json(agent.messages), json(messages));
  assert.equal(agent.messages.filter((m) => m.role === 'user').length, 1, 'the user message was posted once');
  assert.equal(agent.messages.at(-1).content, items.at(-1).parts[0].text);
});

test('HttpAgent: a run cut before its snapshot arrived does not post its message twice', { timeout: 120000 }, async () => {
  const agent = newAgent();
  say(agent, 'scenario:text chars=300');
  const id = agent.messages[0].id;
  // The client's message id keys the post: the same run sent twice (as a
  // retry after a lost answer would) posts once.
  const body = JSON.stringify({ threadId: agent.threadId, runId: randomUUID(), messages: [{ id, role: 'user', content: 'scenario:text chars=300' }], tools: [], context: [], state: {}, forwardedProps: {} });
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${server.url}/v1/agui`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /"type":"RUN_FINISHED"/);
  }
  await agent.runAgent();
  const { messages, items } = await syncedView(agent.threadId);
  assert.deepEqual(items.map((m) => m.role), ['user', 'agent']);
  assert.deepEqual(json(agent.messages), json(messages));
});

test('HttpAgent: a question interrupt answered by the next run, with a middleware that posts only the last message', { timeout: 120000 }, async () => {
  const bodies = [];
  const agent = new HttpAgent({
    url: `${server.url}/v1/agui`,
    threadId: `thread-${randomUUID()}`,
    fetch: (url, init) => { bodies.push(JSON.parse(init.body)); return fetch(url, init); },
  });
  // docs/ag-ui.md: a long thread sends only its last message.
  agent.use((input, next) => next.run({ ...input, messages: input.messages.slice(-1) }));
  for (let i = 0; i < 3; i++) {
    say(agent, `hello ${i}`);
    await agent.runAgent();
  }
  say(agent, 'scenario:question');
  await agent.runAgent();
  const [interrupt] = agent.pendingInterrupts;
  assert.equal(interrupt?.reason, 'question');
  assert.equal(interrupt.message, 'Which colour do you prefer?');
  assert.deepEqual(interrupt.responseSchema.required, ['answer']);
  await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { answer: 'teal' } }] });
  const { messages, items } = await syncedView(agent.threadId);
  assert.deepEqual(json(agent.messages), json(messages));
  assert.equal(messages.at(-1).content, 'You answered "teal". Good choice!');
  assert.deepEqual(items.map((m) => m.role), ['user', 'agent', 'user', 'agent', 'user', 'agent', 'user', 'agent']);
  assert.deepEqual(bodies.map((b) => b.messages.length), [1, 1, 1, 1, 1]);
});
