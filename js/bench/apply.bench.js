// Per-mutation apply cost in Node: one WebSocket message holding one delta
// frame fed to the core at a time (Core.handleFrames, the session's hot
// path), with 1 KB and with 10 MB of text already in the streaming part.
// The cost must not grow with the text (target ≤1.5 µs, flat within 1.3x).
// Also: the cost of re-reading one 100 KB message, what a view refresh costs
// per flush while a long answer streams.
//
// Prints one JSON object per line: {"name", "ns_per_op", ...}.
//   node bench/apply.bench.js [--ops N]

import { fileURLToPath } from 'node:url';
import { Core } from '../core.js';
import { decode, encode } from '../msgpack.js';

const wasm = process.env.AGENTSYNC_WASM ?? fileURLToPath(new URL('../../wasm/module/agentsync.wasm', import.meta.url));
const opsArg = process.argv.indexOf('--ops');
const OPS = opsArg > 0 ? Number(process.argv[opsArg + 1]) : 5000;

const SESSION = 'bench-session';
const MSG = 'msg-1';
const PART = 'part-1';

function message(parts) {
  return {
    message_id: MSG,
    session_id: SESSION,
    sequence: 1,
    revision: 1,
    role: 'agent',
    state: 'streaming',
    turn_id: 'turn-1',
    visibility: 'visible',
    created_at: 1700000000000,
    parts,
  };
}

// Drives a fresh core to live with one streaming agent message whose text
// part already holds `size` bytes (sent as a mid-stream `part` frame).
async function liveCore(size) {
  const core = await Core.load(wasm);
  const must = (out, what) => {
    if (out.error) throw new Error(`${what}: ${out.error.code}: ${out.error.message}`);
    return out.commands;
  };
  must(core.handle({ type: 'start', session_id: SESSION }), 'start');
  must(core.handle({ type: 'subscription_opened' }), 'subscription_opened');
  let seq = 1;
  const cmds = must(core.handleFrames(encode([{ seq: seq++, kind: 'hello', protocol: 1, session_id: SESSION, head_sequence: 1 }])), 'hello');
  const fetch = cmds.find((c) => c.type === 'fetch_page');
  if (!fetch) throw new Error(`no fetch_page after hello: ${JSON.stringify(cmds)}`);
  const page = { items: [message([])], total: 1, start_sequence: 1, end_sequence: 1, has_more: false };
  must(core.handle({ type: 'page', request_id: fetch.request_id, data: encode(page) }), 'page');
  const text = 'x'.repeat(size);
  const part = { part_id: PART, sequence: 1, type: 'text', step_id: 'step-1', state: 'streaming', text };
  must(core.handleFrames(encode([{ seq: seq++, kind: 'part', message_id: MSG, revision: 1, part }])), 'part');
  return { core, seq, offset: size };
}

// Each figure is the median of ROUNDS timed batches (after an untimed
// warm-up batch): the median neither flatters (min) nor punishes (max) a
// noisy machine, and it is what the Go rows report too. `runs` says how
// many batches it is the median of.
const ROUNDS = 5;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

async function bench(name, size) {
  const { core, seq: firstSeq, offset: firstOffset } = await liveCore(size);
  // The frames are encoded up front: on the wire they arrive as bytes.
  const delta = 'abcdefghij';
  const total = OPS * (ROUNDS + 1);
  const frames = new Array(total);
  let seq = firstSeq;
  let offset = firstOffset;
  for (let i = 0; i < total; i++) {
    frames[i] = encode([{ seq: seq++, kind: 'delta', message_id: MSG, revision: 1, part_id: PART, offset, text: delta }]);
    offset += delta.length;
  }
  let errors = 0;
  const times = [];
  // Round 0 warms the JIT and the module up; it is not counted.
  for (let r = 0; r <= ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = r * OPS; i < (r + 1) * OPS; i++) {
      if (core.handleFrames(frames[i]).error) errors++;
    }
    const ns = Number(process.hrtime.bigint() - t0) / OPS;
    if (r > 0) times.push(ns);
  }
  const view = core.message(MSG);
  const got = Buffer.byteLength(view?.parts?.[0]?.text ?? '');
  const want = size + total * delta.length;
  core.free();
  return { name, ns_per_op: Math.round(median(times)), runs: times.length, text_bytes: size, ops: OPS, errors, applied: got === want ? 1 : 0 };
}

// What a view refresh costs per flush while a long answer streams: the
// session re-reads only the changed message (core.message), never the view.
async function refresh(name, size) {
  const { core } = await liveCore(size);
  const n = 50;
  for (let i = 0; i < 20; i++) core.message(MSG);
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) core.message(MSG);
    times.push(Number(process.hrtime.bigint() - t0) / n);
  }
  core.free();
  return { name, ns_per_op: Math.round(median(times)), runs: times.length, text_bytes: size, ops: n };
}

// The same-run baseline: decoding one delta frame with the package's own
// msgpack decoder in plain JavaScript, no WebAssembly involved.
function decodeBaseline(name) {
  const frame = encode([{ seq: 7, kind: 'delta', message_id: MSG, revision: 1, part_id: PART, offset: 1024, text: 'abcdefghij' }]);
  const times = [];
  let sink = 0;
  for (let r = 0; r <= ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) sink += decode(frame).length;
    const ns = Number(process.hrtime.bigint() - t0) / OPS;
    if (r > 0) times.push(ns);
  }
  return { name, ns_per_op: Math.round(median(times)), runs: times.length, ops: OPS, sink };
}

// V8 runs the module first in its baseline compiler and tiers hot
// functions up in the background: one unreported pass lets that finish, or
// whichever case runs first looks slower.
await bench('warmup', 1024);
console.log(JSON.stringify(decodeBaseline('decode_frame_baseline')));
const small = await bench('apply_delta_1KB', 1024);
console.log(JSON.stringify(small));
const large = await bench('apply_delta_10MB', 10 * 1024 * 1024);
console.log(JSON.stringify(large));
console.log(JSON.stringify(await refresh('refresh_message_100KB', 100 * 1024)));
if (small.errors || large.errors || !small.applied || !large.applied) {
  console.error('bench: some deltas were rejected or not applied; the figures are not meaningful');
  process.exitCode = 1;
}
