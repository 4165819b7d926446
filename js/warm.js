// A synthetic answer streamed through a scratch client of a Core's own
// instance, so that a page's first real long answer finds the module warm.
//
// Why: a page that has just loaded holds a module compiled by V8's baseline
// WebAssembly tier, an instance whose Go heap has not grown, and a garbage
// collector whose code never ran. Its first long answer then paid for all
// three inside the answer's own tasks: memory grown arena by arena (each
// growth clearing its pages), the collector's first cycles in baseline
// code, and the runtime's first read of its statistics. The page's longest
// tasks were those. Run while the page is idle, one WebSocket message's
// worth of frames per slice, the same work leaves the code tiered up (the
// tier is the module's, shared by its instances) and the memory grown (the
// instance's); the scratch client is freed and its garbage collected
// before the real answer.

import { encode } from './msgpack.js';

const SESSION = 'warm-up';
const MESSAGE = 'm';
const PART = 'p';
// The frames of one WebSocket message: what the server sends a reader that
// keeps up (one delta each), batched the way a lagging reader gets them.
const DELTA = 'lorem ipsum dolor sit amet, café ';
const DELTA_BYTES = new TextEncoder().encode(DELTA).length; // offsets count bytes
const PER_MESSAGE = 2000;

/**
 * Streams `bytes` bytes of synthetic answer through the scratch Core
 * `core` (a client of its own on the instance to warm), one WebSocket
 * message's worth of frames between two awaits of `pause`, then commits
 * it. Throws what the core throws; the caller frees the scratch Core.
 * @param {import('./core.js').Core} core
 * @param {{bytes?: number, pause?: () => Promise<void>}} [opts]
 */
export async function warmCore(core, { bytes = 1 << 20, pause = nextTask } = {}) {
  const { part, message } = startSynthetic(core);
  let seq = 2;
  const delta = (offset) => ({ seq: seq++, kind: 'delta', message_id: MESSAGE, revision: 1, part_id: PART, offset, text: DELTA });
  let offset = 0;
  // The steady state of a reader that keeps up: one delta per message.
  for (let i = 0; i < PER_MESSAGE; i++, offset += DELTA_BYTES) core.handleCompact(encode([delta(offset)]));
  await pause();
  // Then the bulk, a message of many frames at a time.
  while (offset < bytes) {
    const frames = [];
    for (let i = 0; i < PER_MESSAGE; i++, offset += DELTA_BYTES) frames.push(delta(offset));
    core.handleCompact(encode(frames));
    await pause();
  }
  const done = { ...part, state: 'done', text: DELTA.repeat(offset / DELTA_BYTES) };
  core.handleChanges(encode([
    { seq: seq++, kind: 'part', message_id: MESSAGE, revision: 1, part: done },
    { seq: seq++, kind: 'message', message: { ...message, revision: 2, state: 'done', parts: [done] } },
  ]));
  core.view(); // the host's whole-view read, once
}

/**
 * Makes core (fresh) live on a synthetic session whose snapshot holds one
 * agent message streaming an empty text part, after frame 1 (the hello):
 * deltas to part `p` of message `m` may follow from seq 2. Returns the
 * message and its part as the snapshot had them.
 * @param {import('./core.js').Core} core
 */
export function startSynthetic(core) {
  core.handle({ type: 'start', session_id: SESSION });
  core.handle({ type: 'subscription_opened' });
  const hello = core.handleChanges(encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: SESSION, head_sequence: 1 }]));
  const fetch = hello.out.commands.find((c) => c.type === 'fetch_page');
  if (!fetch) throw new Error('synthetic session: the hello asked for no snapshot');
  const part = { part_id: PART, sequence: 1, type: 'text', step_id: 's', state: 'streaming' };
  const message = { message_id: MESSAGE, session_id: SESSION, sequence: 1, revision: 1, role: 'agent', state: 'streaming', turn_id: 't', visibility: 'visible', created_at: 1, parts: [part] };
  core.handle({ type: 'page', request_id: fetch.request_id, data: encode({ items: [message], total: 1, start_sequence: 1, end_sequence: 1, has_more: false }) });
  core.changes();
  return { part, message };
}

// The next macrotask: a slice of the warm-up never holds the page long.
function nextTask() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
