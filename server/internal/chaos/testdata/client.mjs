// A viewer of one session on the JavaScript host, for the chaos test:
// node --experimental-websocket client.mjs BASE_URL SESSION_ID
// It prints {"live":true} once connected; then for each line
// "DIGEST TIMEOUT_MS" on stdin it waits until the view is live with that
// digest and prints {"ok":bool,"status":...,"digest":...}.
import { createInterface } from 'node:readline';
import { connect } from '../../../../js/node.js';

const [url, sessionId] = process.argv.slice(2);
let session;
try {
  // wait: false, then live: connect() itself gives up on the first network
  // failure, and the proxies cut connections; a session retries by itself.
  session = await connect({ url, sessionId, WebSocket: globalThis.WebSocket, wait: false });
  await session.waitFor((v) => v.status === 'live', { timeoutMs: 30000 });
  console.log(JSON.stringify({ live: true }));
} catch (err) {
  console.log(JSON.stringify({ live: false, error: String(err) }));
  process.exit(1);
}

const digestOf = () => {
  try {
    return session.digest();
  } catch {
    return '';
  }
};

for await (const line of createInterface({ input: process.stdin })) {
  const [want, ms] = line.trim().split(' ');
  const deadline = Date.now() + Number(ms);
  let ok = false;
  while (Date.now() < deadline) {
    if (session.view.status === 'live' && digestOf() === want) {
      ok = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  console.log(JSON.stringify({ ok, status: session.view.status, digest: digestOf() }));
}
session.close();
