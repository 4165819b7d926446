// The README's JavaScript example, for Node 20 (the same calls work in a
// browser app that imports @agentsync/client):
//
//   node --experimental-websocket examples/node/quickstart.mjs http://127.0.0.1:8080
//
// In an app, import from '@agentsync/client' (Node picks its node.js entry,
// which finds agentsync.wasm by itself).
import { createSession } from '../../js/node.js';

const url = process.argv[2] ?? 'http://127.0.0.1:8080';

const session = await createSession(url, {
  WebSocket: globalThis.WebSocket,
  // Attached before the session starts: prints connecting, syncing, live.
  onStatus: ({ status, reason }) => console.log('status', status, reason),
});

const sent = await session.send('scenario:tools');
// The view stays exact through disconnects; wait until the reply is done.
const view = await session.waitFor((v) => {
  const last = v.messages.at(-1);
  return last !== undefined && last.sequence > sent.sequence && last.state === 'done';
});
const reply = view.messages.at(-1);
for (const part of reply.parts) {
  if (part.type === 'tool') console.log(`tool ${part.tool_name}: ${part.state}`);
  if (part.type === 'text') console.log(`text: ${part.text}`);
}
console.log('digest', session.digest());
session.close();
