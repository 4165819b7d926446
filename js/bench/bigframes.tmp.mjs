import { Core } from '../node.js';
import { encode } from '../msgpack.js';
const chunk = 'lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n'.repeat(1100).slice(0, 64 << 10);
for (let r = 0; r < 6; r++) {
  const core = await Core.load(process.env.WASM ?? new URL('../../wasm/module/agentsync.wasm', import.meta.url));
  core.handle({ type: 'start', session_id: 's' });
  core.handle({ type: 'subscription_opened' });
  const hello = core.handleCompact(encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: 's', head_sequence: 1 }]));
  const fetch = hello.out.commands.find((c) => c.type === 'fetch_page');
  const part = { part_id: 'p1', sequence: 1, type: 'text', step_id: 's1', state: 'streaming', text: '' };
  const msg = { message_id: 'm1', session_id: 's', sequence: 1, revision: 1, role: 'agent', state: 'streaming', turn_id: 't', visibility: 'visible', created_at: 1, parts: [part] };
  core.handle({ type: 'page', request_id: fetch.request_id, data: encode({ items: [msg], total: 1, start_sequence: 1, end_sequence: 1, has_more: false }) });
  core.changes();
  let seq = 2, off = 0;
  const times = [];
  for (let m = 0; m < 16; m++) {
    const frames = [];
    for (let k = 0; k < 4; k++) { frames.push({ seq: seq++, kind: 'delta', message_id: 'm1', revision: 1, part_id: 'p1', offset: off, text: chunk }); off += chunk.length; }
    const data = encode(frames);
    const t0 = performance.now();
    const res = core.handleCompact(data);
    times.push((performance.now() - t0).toFixed(1));
  }
  console.log('256KB messages (ms):', times.join(' '));
  core.free();
}
