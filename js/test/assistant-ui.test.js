// The conversion of @agentsync/client/assistant-ui on messages a real
// server wrote (a tool loop, an approval, a question, a stop, a file, a
// failed turn) and what the composer sends back. The runtime itself is
// driven in Chromium by demo-test/assistant-ui.test.js.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { createSession } from '../node.js';
import { toThreadMessage, toThreadMessageLike, toUserParts } from '../assistant-ui.js';
import { startServer } from './harness/syncserver.js';

let server;
before(async () => {
  server = await startServer({ speed: '1ms' });
}, { timeout: 10 * 60 * 1000 });
after(() => server?.stop());

const lastAgent = (v) => v.messages.at(-1)?.role === 'agent' ? v.messages.at(-1) : undefined;

async function turn(session, text, until) {
  const user = await session.send(text);
  return session.waitFor((v) => {
    const m = lastAgent(v);
    return !!m && m.sequence > user.sequence && until(m);
  }, { timeoutMs: 30000 });
}

test('a tool loop: each tool a tool-call with its args and result, the text parts with their ids', async (t) => {
  const s = await createSession(server.url);
  t.after(() => s.close());
  const v = await turn(s, 'scenario:tools city=Oslo', (m) => m.state === 'done');
  const m = lastAgent(v);
  const like = toThreadMessageLike(m);
  assert.equal(like.id, m.message_id);
  assert.equal(like.role, 'assistant');
  assert.deepEqual(like.status, { type: 'complete', reason: 'stop' });
  assert.equal(like.metadata.custom.sequence, m.sequence);
  const calls = like.content.filter((p) => p.type === 'tool-call');
  assert.deepEqual(calls.map((c) => c.toolName), ['get_weather', 'calculator']);
  const weather = m.parts.find((p) => p.type === 'tool' && p.tool_name === 'get_weather');
  assert.deepEqual(calls[0].args, weather.input);
  assert.deepEqual(calls[0].result, weather.output);
  assert.equal(calls[0].toolCallId, weather.tool_call_id);
  const texts = m.parts.filter((p) => p.type === 'text');
  assert.deepEqual(like.content.filter((p) => p.type === 'text').map((p) => [p.id, p.text]), texts.map((p) => [p.part_id, p.text]));
  // The same message object, the same ThreadMessage.
  assert.equal(toThreadMessage(m), toThreadMessage(m));
  assert.equal(toThreadMessage(m).status.type, 'complete');
  const user = toThreadMessage(v.messages.at(-2));
  assert.equal(user.role, 'user');
  assert.deepEqual(user.content, [{ type: 'text', id: v.messages.at(-2).parts[0].part_id, text: 'scenario:tools city=Oslo' }]);
});

test('an approval is the tool call\'s approval gate: pending, then approved; a denial reads approved false', async (t) => {
  const s = await createSession(server.url);
  t.after(() => s.close());
  let v = await turn(s, 'scenario:approval', (m) => m.parts.some((p) => p.type === 'interaction' && p.status === 'pending'));
  let m = lastAgent(v);
  const interaction = m.parts.find((p) => p.type === 'interaction');
  let like = toThreadMessageLike(m);
  assert.deepEqual(like.status, { type: 'requires-action', reason: 'tool-calls' });
  const call = like.content.find((p) => p.type === 'tool-call');
  assert.equal(call.toolName, 'send_email');
  assert.deepEqual(call.approval, { id: interaction.interaction_id });
  assert.equal(like.content.filter((p) => p.type === 'data').length, 0, 'the interaction shows on its tool only');
  await s.answer(interaction, { approved: true });
  v = await s.waitFor((x) => lastAgent(x)?.state === 'done', { timeoutMs: 30000 });
  like = toThreadMessageLike(lastAgent(v));
  assert.deepEqual(like.content.find((p) => p.type === 'tool-call').approval, { id: interaction.interaction_id, approved: true });

  v = await turn(s, 'scenario:approval', (x) => x.parts.some((p) => p.type === 'interaction' && p.status === 'pending'));
  m = lastAgent(v);
  await s.answer(m.parts.find((p) => p.type === 'interaction'), { approved: false });
  v = await s.waitFor((x) => lastAgent(x)?.state === 'done' && lastAgent(x).message_id === m.message_id, { timeoutMs: 30000 });
  const denied = toThreadMessageLike(lastAgent(v)).content.find((p) => p.type === 'tool-call');
  assert.equal(denied.approval.approved, false);
  assert.ok(denied.result !== undefined, 'a denied call has its result');
});

test('a question is an approval gate with a prompt and a text answer', async (t) => {
  const s = await createSession(server.url);
  t.after(() => s.close());
  let v = await turn(s, 'scenario:question', (m) => m.parts.some((p) => p.type === 'interaction' && p.status === 'pending'));
  const q = lastAgent(v).parts.find((p) => p.type === 'interaction');
  const call = toThreadMessageLike(lastAgent(v)).content.find((p) => p.type === 'tool-call');
  assert.deepEqual(call.approval, { id: q.interaction_id, prompt: q.request.question, display: 'text' });
  await s.answer(q, { answer: 'teal' });
  v = await s.waitFor((x) => lastAgent(x)?.state === 'done', { timeoutMs: 30000 });
  const answered = toThreadMessageLike(lastAgent(v)).content.find((p) => p.type === 'tool-call');
  assert.equal(answered.approval.text, 'teal');
  assert.equal(answered.approval.approved, true);
});

test('a stopped turn is incomplete (cancelled), a failed one incomplete (error), a file part a file', async (t) => {
  const s = await createSession(server.url);
  t.after(() => s.close());
  let v = await turn(s, 'scenario:long chars=200000 delta=8', (m) => m.parts.some((p) => p.type === 'text' && (p.text ?? '').length > 100));
  assert.deepEqual(toThreadMessageLike(lastAgent(v)).status, { type: 'running' });
  await s.action('stop');
  v = await s.waitFor((x) => lastAgent(x)?.state === 'done', { timeoutMs: 30000 });
  assert.deepEqual(toThreadMessageLike(lastAgent(v)).status, { type: 'incomplete', reason: 'cancelled' });

  v = await turn(s, 'scenario:error', (m) => m.state === 'done');
  const failed = toThreadMessageLike(lastAgent(v));
  assert.equal(failed.status.type, 'incomplete');
  assert.equal(failed.status.reason, 'error');
  assert.ok(failed.content.some((p) => p.type === 'data' && p.name === 'agentsync-error'));

  v = await turn(s, 'scenario:file', (m) => m.state === 'done');
  const file = toThreadMessageLike(lastAgent(v)).content.find((p) => p.type === 'file');
  assert.deepEqual(file, { type: 'file', data: 'aGVsbG8gZnJvbSB0aGUgc2NyaXB0ZWQgbW9kZWwK', mimeType: 'text/plain', filename: 'hello.txt' });
});

test('what the composer sends: text, images and files (attachments too), data', () => {
  assert.deepEqual(
    toUserParts({
      content: [{ type: 'text', text: 'look' }, { type: 'text', text: '' }, { type: 'data', name: 'pick', data: { n: 1 }, id: 'p1' }],
      attachments: [
        { content: [{ type: 'image', image: 'data:image/png;base64,iVBO', filename: 'a.png' }] },
        { content: [{ type: 'file', data: 'aGk=', mimeType: 'text/plain', filename: 'a.txt' }] },
        { content: [{ type: 'file', data: 'https://example.com/r.pdf', mimeType: 'application/pdf' }] },
      ],
    }),
    [
      { type: 'text', text: 'look' },
      { type: 'data', data_type: 'pick', data: { n: 1 }, data_id: 'p1' },
      { type: 'file', url: 'data:image/png;base64,iVBO', media_type: 'image/png', filename: 'a.png' },
      { type: 'file', url: 'data:text/plain;base64,aGk=', media_type: 'text/plain', filename: 'a.txt' },
      { type: 'file', url: 'https://example.com/r.pdf', media_type: 'application/pdf' },
    ],
  );
});
