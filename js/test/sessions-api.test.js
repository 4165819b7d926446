// What the server offers besides the stream, through the JS host against
// the real server on loopback: titles (rename, listed), deleting a session
// (a connected Session and one that only knows its id), the retry action,
// and the wire's constants among what the server says it accepts.

import assert from 'node:assert/strict';
import { after, before, test } from './harness/timed.js';
import {
  ActionRetry,
  ActionSetApprovalMode,
  ActionSetModel,
  ActionStop,
  AgentsyncError,
  PartError,
  RoleAgent,
  StateDone,
  InteractionPending,
  InteractionResolved,
  ToolAwaitingApproval,
  ToolOutputAvailable,
  VisibilityInternal,
  connect,
  createSession,
  deleteSession,
  isApproval,
  isQuestion,
  listSessions,
  renameSession,
  watchSessions,
} from '../index.js';
import { startServer } from './harness/syncserver.js';
import { wasmPath } from './paths.js';

let server;
const opts = () => ({ wasm: wasmPath, WebSocket: globalThis.WebSocket });

before(async () => {
  server = await startServer({ speed: '0s' });
});

after(async () => {
  await server?.stop();
});

const listed = async (id) => (await listSessions(server.url)).find((s) => s.session_id === id);

test('rename sets the title that listSessions shows; renameSession does without a connection', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  assert.equal((await listed(session.sessionId)).title, '', 'a new session has no title');
  const renamed = await session.rename('Trip to Oslo');
  assert.equal(renamed.session_id, session.sessionId);
  assert.equal(renamed.title, 'Trip to Oslo');
  const info = await listed(session.sessionId);
  assert.equal(info.title, 'Trip to Oslo');
  for (const a of [ActionStop, ActionSetModel, ActionSetApprovalMode, ActionRetry]) {
    assert.ok(info.actions.includes(a), `the server accepts ${a}`);
  }

  const again = await renameSession(server.url, session.sessionId, 'Trip to Bergen');
  assert.equal(again.title, 'Trip to Bergen');
  assert.equal((await listed(session.sessionId)).title, 'Trip to Bergen');
  assert.equal(session.status, 'live', 'a rename does not disturb the stream');

  await assert.rejects(renameSession(server.url, 'no-such-session', 'x'), (e) => e instanceof AgentsyncError && e.code === 'not_found' && e.status === 404);
  await assert.rejects(session.rename(42), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
});

test('delete removes the session and closes the Session; another subscriber loses it', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  const user = await session.send('hello');
  await session.waitFor((v) => v.messages.some((m) => m.sequence > user.sequence && m.state === StateDone));
  const observer = await connect({ url: server.url, sessionId: session.sessionId, ...opts() });
  t.after(() => observer.close());
  const observerLost = observer.waitFor((v) => v.status !== 'live');

  await session.delete();
  assert.equal(session.status, 'closed');
  assert.equal(session.view.messages.length, 2, 'the last view stays readable');
  assert.equal(await listed(session.sessionId), undefined, 'not listed any more');
  await observerLost;
  await assert.rejects(observer.messages(), (e) => e instanceof AgentsyncError && e.code === 'not_found');
  await assert.rejects(deleteSession(server.url, session.sessionId), (e) => e instanceof AgentsyncError && e.code === 'not_found', 'deleting twice');

  // deleteSession: by id, without a connection.
  const other = await createSession(server.url, opts());
  other.close();
  await deleteSession(server.url, other.sessionId);
  assert.equal(await listed(other.sessionId), undefined);
});

test('retry runs a turn that ended with a recoverable error again', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  await assert.rejects(session.retry(), (e) => e instanceof AgentsyncError && e.code === 'conflict' && e.status === 409, 'nothing to retry yet');

  const user = await session.send('scenario:error chars=40');
  const failedView = await session.waitFor((v) => v.messages.some((m) => m.sequence > user.sequence && m.state === StateDone));
  const failed = failedView.messages.at(-1);
  const error = failed.parts.at(-1);
  assert.equal(error.type, PartError);
  assert.equal(error.scope, 'turn');
  assert.equal(error.recoverable, true);

  const prompt = await session.retry();
  assert.equal(prompt.visibility, VisibilityInternal, 'the recovery prompt is an internal user message');
  assert.equal(prompt.turn_id, failed.turn_id, 'in the failed turn');
  const view = await session.waitFor((v) => v.messages.some((m) => m.sequence > prompt.sequence && m.role === RoleAgent && m.state === StateDone));
  const answer = view.messages.at(-1);
  assert.equal(answer.turn_id, failed.turn_id);
  assert.ok(!answer.parts.some((p) => p.type === PartError), 'the retried turn answered');
  assert.ok(!view.messages.some((m) => m.message_id === prompt.message_id), 'the internal prompt is not in a view without internal messages');
  await assert.rejects(session.action(ActionRetry), (e) => e instanceof AgentsyncError && e.code === 'conflict', 'nothing to retry after the answer');
});

test('an approval is answered given as its part, which isApproval tells from a question', async (t) => {
  const session = await createSession(server.url, opts());
  t.after(() => session.close());
  await session.send('scenario:approval');
  const asking = await session.waitFor((v) => v.messages.some((m) => m.parts.some((p) => isApproval(p) && p.status === InteractionPending)));
  const parts = asking.messages.at(-1).parts;
  const interaction = parts.find(isApproval);
  assert.equal(isQuestion(interaction), false);
  assert.equal(parts.find((p) => p.type === 'tool')?.state, ToolAwaitingApproval);
  await assert.rejects(session.answer({}, { approved: true }), (e) => e instanceof AgentsyncError && e.code === 'bad_request');
  await session.answer(interaction, { approved: true });
  const done = await session.waitFor((v) => v.messages.at(-1)?.state === StateDone && v.messages.some((m) => m.parts.some((p) => isApproval(p) && p.status === InteractionResolved)));
  const resolved = done.messages.flatMap((m) => m.parts).find((p) => isApproval(p) && p.interaction_id === interaction.interaction_id);
  assert.deepEqual(resolved.response, { approved: true });
  assert.ok(done.messages.flatMap((m) => m.parts).some((p) => p.type === 'tool' && p.state === ToolOutputAvailable), 'the approved tool ran');
});

test('watchSessions: the list, live: a session made, renamed, a turn run and deleted elsewhere', async (t) => {
  const lists = [];
  const stop = watchSessions(server.url, { WebSocket: globalThis.WebSocket }, (l) => lists.push(l));
  t.after(stop);
  const until = async (pred) => {
    const end = Date.now() + 20000;
    while (!(lists.length && pred(lists.at(-1)))) {
      if (Date.now() > end) throw new Error(`the list never matched: ${JSON.stringify(lists.at(-1)?.slice(0, 3))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return lists.at(-1);
  };
  await until(() => true); // the first, whole list
  // Another client makes a session: it heads the list.
  const made = await createSession(server.url, opts());
  const id = made.sessionId;
  let list = await until((l) => l[0]?.session_id === id);
  await renameSession(server.url, id, 'watched');
  list = await until((l) => l.find((s) => s.session_id === id)?.title === 'watched');
  await made.send('hello');
  await made.waitFor((v) => v.messages.length === 2 && v.messages[1].state === 'done');
  list = await until((l) => { const s = l.find((x) => x.session_id === id); return s && !s.running && s.updated_at > list.find((x) => x.session_id === id).updated_at; });
  made.close();
  await deleteSession(server.url, id);
  list = await until((l) => !l.some((s) => s.session_id === id));
  assert.deepEqual(list.map((s) => s.session_id), (await listSessions(server.url)).map((s) => s.session_id));
});
