// useChat's stop() against the real server with the real `ai` package
// (its AbstractChat, which useChat wraps): with withServerStop the turn
// stops on the server, and a reload finds the stopped answer, not a replay
// of the rest; without it (an abort alone, as a reload or a lost network
// is) the turn runs on to its end, resumable.

import { test, before, after } from './harness/timed.js';
import assert from 'node:assert/strict';
import { AbstractChat, DefaultChatTransport } from 'ai';
import { createSession } from '../node.js';
import { toUIMessages, withServerStop } from '../ai.js';
import { startServer } from './harness/syncserver.js';

let server;
before(async () => {
  server = await startServer({ speed: '2ms' });
}, { timeout: 10 * 60 * 1000 });
after(() => server?.stop());

// The smallest ChatState: what @ai-sdk/react's keeps, without React.
class State {
  constructor() {
    this.status = 'ready';
    this.error = undefined;
    this.messages = [];
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
  constructor(opts) {
    super({ ...opts, state: new State() });
  }
}

// A stop must come mid-answer (200,000 characters stream for 16 s); an
// abort alone must see the turn to its end, so its answer is shorter.
const charsFor = (serverStop) => (serverStop ? 200000 : 20000);
const lastText = (m) => m?.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') ?? '';

async function waitUntil(what, ok) {
  for (let i = 0; i < 600; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within 30 s`);
}

for (const serverStop of [true, false]) {
  test(`useChat stop() ${serverStop ? 'with withServerStop stops the turn; a reload shows the stopped answer' : 'alone (an abort) leaves the turn running, resumable'}`, { timeout: 120000 }, async () => {
    const CHARS = charsFor(serverStop);
    const session = await createSession(server.url);
    try {
      const api = `${server.url}/v1/chat`;
      const plain = new DefaultChatTransport({ api });
      const transport = serverStop ? withServerStop(plain, { api }) : plain;
      const chat = new Chat({ id: session.sessionId, transport });
      const sent = chat.sendMessage({ text: `scenario:long chars=${CHARS} delta=25` });
      await waitUntil('some text streamed', () => lastText(chat.messages.at(-1)).length > 500);
      await chat.stop();
      await sent;
      const shown = chat.messages.at(-1);
      assert.equal(shown.role, 'assistant');
      assert.ok(lastText(shown).length < CHARS, `stop() came mid-answer (${lastText(shown).length} of ${CHARS} shown)`);

      const view = await session.waitFor((v) => {
        const m = v.messages.at(-1);
        return m?.role === 'agent' && m.state === 'done';
      }, { timeoutMs: 60000 });
      const agent = view.messages.at(-1);
      const stopped = agent.parts.some((p) => p.type === 'action' && p.action_type === 'stop');
      const text = agent.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
      // A reload: a new chat of the same id, resuming.
      const reloaded = new Chat({ id: session.sessionId, transport });
      await reloaded.resumeStream();
      if (serverStop) {
        assert.ok(stopped, 'the turn closed with the stop action');
        assert.ok(text.length < CHARS, `stopped early (${text.length} of ${CHARS})`);
        // Nothing streams after the stop: the resume finds no stream (204), no replay.
        assert.equal(reloaded.messages.length, 0, 'nothing resumed');
        assert.equal(await plain.reconnectToStream({ chatId: session.sessionId }), null);
        const ui = toUIMessages(view).at(-1);
        assert.ok(ui.parts.some((p) => p.type === 'data-agentsync-action' && p.data.action_type === 'stop'));
      } else {
        assert.ok(!stopped, 'an abort alone stopped nothing');
        assert.equal(text.length, CHARS, 'the turn ran to its end');
      }
    } finally {
      session.close();
    }
  });
}
