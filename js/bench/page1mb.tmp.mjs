import { Core } from '../node.js';
import { encode } from '../msgpack.js';
const text = 'lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n'.repeat(Math.floor(1_000_000 / 58));
const part = { part_id: 'p1', sequence: 1, type: 'text', step_id: 's1', state: 'streaming', text };
const msg = { message_id: 'm1', session_id: 's', sequence: 1, revision: 1, role: 'agent', state: 'streaming', turn_id: 't', visibility: 'visible', created_at: 1, parts: [part] };
const data = encode({ items: [msg], total: 1, start_sequence: 1, end_sequence: 1, has_more: false });
for (let r = 0; r < 8; r++) {
  const core = await Core.load(process.env.WASM ?? new URL('../../wasm/module/agentsync.wasm', import.meta.url));
  core.handle({ type: 'start', session_id: 's' });
  core.handle({ type: 'subscription_opened' });
  const hello = core.handleCompact(encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: 's', head_sequence: 1 }]));
  const fetch = hello.out.commands.find((c) => c.type === 'fetch_page');
  const t0 = performance.now();
  core.handle({ type: 'page', request_id: fetch.request_id, data });
  const t1 = performance.now();
  const ch = core.changes();
  const t2 = performance.now();
  console.log('handle(page)', (t1 - t0).toFixed(1), 'ms; changes()', (t2 - t1).toFixed(1), 'ms', ch.messages[0].message.parts[0].text.length);
  core.free();
}
