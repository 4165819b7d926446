// The task-fed runs of task.bench.js (Node) and chromium.bench.js (the same
// in a Chromium page), written once: the frames (a delta template patched
// per message), the in-process socket and page stand-ins, one task per
// message (a MessageChannel turn), and the four runs (host, bare core, task
// alone, AI SDK). Web APIs only, so a page imports it as it is (served at
// /js/bench/task-runs.js); what differs between Node and the page (the
// package's entry, the module's source, the AI SDK, the clock) is passed in.

import { encode } from '../msgpack.js';

export const SESSION = 'bench';
export const DELTA = 'abcdefgh';
export const TARGET = 'm2';

export class ScriptedSocket {
  static last = null;
  constructor() {
    ScriptedSocket.last = this;
    queueMicrotask(() => this.onopen?.());
  }
  close() {}
}

/** The session's first page: a question and the agent message the deltas stream into. */
export function pageBody() {
  const msg = (seq, role, state, text) => ({
    message_id: `m${seq}`, session_id: SESSION, sequence: seq, revision: 1, role,
    ...(role === 'agent' ? { state, turn_id: 't' } : {}), visibility: 'visible', created_at: seq,
    parts: [{ part_id: 'p1', sequence: 1, type: 'text', ...(role === 'agent' ? { step_id: 's', state } : {}), text }],
  });
  return encode({ items: [msg(1, 'user', 'done', 'a question'), msg(2, 'agent', 'streaming', '')], total: 2, start_sequence: 1, end_sequence: 2, has_more: false });
}

/** The hello frame a live subscription opens with. */
export function helloFrame() {
  return encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: SESSION, head_sequence: 2 }]);
}

// A delta frame with its seq and offset as uint32 slots patched per message.
function deltaTemplate() {
  const slot = 0x10000000;
  const t = encode([{ seq: slot, kind: 'delta', message_id: TARGET, revision: 1, part_id: 'p1', offset: slot, text: DELTA }]);
  const at = [];
  for (let i = 0; i + 4 < t.length; i++) {
    if (t[i] === 0xce && t[i + 1] === 0x10 && t[i + 2] === 0 && t[i + 3] === 0 && t[i + 4] === 0) at.push(i + 1);
  }
  if (at.length !== 2) throw new Error('delta template: no seq and offset slots');
  return [t, at[0], at[1]];
}
const [template, seqAt, offsetAt] = deltaTemplate();

function putUint32(b, at, v) {
  b[at] = v >>> 24;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

/** The i-th delta's message as a socket hands it over: a fresh ArrayBuffer. */
export function messageBytes(i) {
  const bytes = template.slice();
  putUint32(bytes, seqAt, i + 2); // hello was seq 1
  putUint32(bytes, offsetAt, i * DELTA.length);
  return bytes;
}

const utf8 = new TextEncoder();

/** The median of xs (the mean of the middle two for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// No collection is forced between runs (e2e.bench.js forces one): after a
// forced full collection the first ~5,000 deltas of a fresh session ran
// 3-5x slower (V8 growing its young generation again; a 16 MB semi-space
// hid it), which a page that has been open a while never sees, and at
// 10,000 deltas that start-up was most of the figure. The runs leave
// little garbage (the AI SDK's pulled run too), and they are interleaved.
// uiChunks is the AI SDK's side of every run: a function that returns the
// UI message chunks of one message of n text deltas of DELTA, one per call,
// then null.
export function uiChunks(n) {
  const head = [{ type: 'start', messageId: 'm' }, { type: 'text-start', id: 't' }];
  const tail = [{ type: 'text-end', id: 't' }, { type: 'finish' }];
  let i = 0;
  return () => {
    if (i < head.length) return head[i++];
    const k = i++ - head.length;
    if (k < n) return { type: 'text-delta', id: 't', delta: DELTA };
    const t = k - n;
    return t < tail.length ? tail[t] : null;
  };
}

export const runsFor = (n) => (n <= 10_000 ? 15 : n <= 100_000 ? 5 : 3);

/**
 * Runs each of fns runsFor(n) times, interleaved (the order rotated each
 * round), and returns each one's result with the median of every figure
 * (a number other than runs, deltas and applied) and applied only if every
 * run's was.
 */
export async function medians(fns, n) {
  const all = fns.map(() => []);
  for (let r = 0; r < runsFor(n); r++) {
    for (let k = 0; k < fns.length; k++) {
      const i = (r + k) % fns.length;
      all[i].push(await fns[i]());
    }
  }
  return all.map((rs) => {
    const out = { ...rs[0], runs: rs.length, applied: rs.every((r) => r.applied) ? 1 : 0 };
    for (const [k, v] of Object.entries(rs[0])) {
      if (typeof v === 'number' && !['runs', 'deltas', 'applied'].includes(k)) out[k] = Math.round(median(rs.map((r) => r[k])));
    }
    return out;
  });
}

/**
 * The runs, on the given entry of the package: {connect, Core, COMPACT}
 * (node.js or index.js), wasm (the module's source: a path in Node, a URL
 * in a page), readUIMessageStream (the AI SDK's) and now (a clock in ns).
 * Returns {host, bare, empty, ai, medians}: each run is (name, n) =>
 * Promise<{name, ns_per_op, runs: 1, deltas, applied}>.
 */
export function taskRuns({ connect, Core, COMPACT, wasm, readUIMessageStream, now }) {
  // Runs onTask(i) for i in [0, n), each in its own MessageChannel task, and
  // resolves with the wall time of all of them (microtasks included).
  function tasks(n, onTask) {
    return new Promise((resolve) => {
      const ch = new MessageChannel();
      let i = 0;
      let t0 = 0;
      ch.port1.onmessage = () => {
        if (i === n) {
          const ns = now() - t0;
          ch.port1.close();
          resolve(ns);
          return;
        }
        onTask(i++);
        ch.port2.postMessage(null);
      };
      t0 = now();
      ch.port2.postMessage(null);
    });
  }

  async function liveSession() {
    const body = pageBody();
    const fetch = async () => new Response(body, { status: 200, headers: { 'content-type': 'application/msgpack' } });
    const session = await connect({ url: 'http://bench.invalid', sessionId: SESSION, wasm, WebSocket: ScriptedSocket, fetch, wait: false });
    const ws = ScriptedSocket.last;
    await new Promise((r) => setTimeout(r, 0));
    ws.onmessage({ data: helloFrame() });
    await session.waitFor((v) => v.status === 'live');
    return { session, ws };
  }

  async function host(name, n) {
    const { session, ws } = await liveSession();
    let appended = 0;
    session.on('change', (c) => {
      for (const m of c.messages) for (const pc of m.parts) appended += pc.appended?.length ?? 0;
    });
    const ns = await tasks(n, (i) => ws.onmessage({ data: messageBytes(i).buffer }));
    const m = session.view.messages.find((x) => x.message_id === TARGET);
    const ok = m?.parts[0].text.length === n * DELTA.length && appended === n * DELTA.length;
    session.close();
    return { name, ns_per_op: Math.round(ns / n), runs: 1, deltas: n, applied: ok ? 1 : 0 };
  }

  // The bare core on the same frames: Core.handleCompact, the appended text
  // read from its answer (compactText), nothing else.
  async function bare(name, n) {
    const core = await Core.load(wasm);
    core.handle({ type: 'start', session_id: SESSION });
    core.handle({ type: 'subscription_opened' });
    const cmds = core.handleFrames(helloFrame()).commands;
    const fetchCmd = cmds.find((c) => c.type === 'fetch_page');
    core.handle({ type: 'page', request_id: fetchCmd.request_id, data: pageBody() });
    core.changes();
    let appended = 0;
    const ns = await tasks(n, (i) => {
      const res = core.handleCompact(messageBytes(i));
      if (res === COMPACT) appended += core.compactText.length;
      else {
        const a = res.changes?.appends ?? [];
        for (let k = 2; k < a.length; k += 3) appended += a[k].length;
      }
    });
    const ok = appended === n * DELTA.length && utf8.encode(core.message(TARGET)?.parts?.[0]?.text ?? '').length === n * DELTA.length;
    core.free();
    return { name, ns_per_op: Math.round(ns / n), runs: 1, deltas: n, applied: ok ? 1 : 0 };
  }

  async function empty(name, n) {
    let sink = 0;
    const ns = await tasks(n, (i) => {
      sink += messageBytes(i).length;
    });
    return { name, ns_per_op: Math.round(ns / n), runs: 1, deltas: n, applied: sink > 0 ? 1 : 0 };
  }

  // The AI SDK: each chunk pulled in a task of its own (a network stream's
  // chunks arrive in tasks), the consumer reading the text of each message
  // readUIMessageStream yields.
  async function ai(name, n) {
    const next = uiChunks(n);
    const ch = new MessageChannel();
    let wake = null;
    ch.port1.onmessage = () => wake();
    const turn = () => new Promise((r) => {
      wake = r;
      ch.port2.postMessage(null);
    });
    const stream = new ReadableStream({
      async pull(c) {
        await turn();
        const chunk = next();
        if (chunk) c.enqueue(chunk);
        else c.close();
      },
    }, { highWaterMark: 0 });
    let textLen = 0;
    const t0 = now();
    for await (const msg of readUIMessageStream({ stream })) {
      const p = msg.parts.find((x) => x.type === 'text');
      textLen = p ? p.text.length : 0;
    }
    const ns = now() - t0;
    ch.port1.close();
    return { name, ns_per_op: Math.round(ns / n), runs: 1, deltas: n, applied: textLen === n * DELTA.length ? 1 : 0 };
  }

  return { host, bare, empty, ai, medians };
}
