// One delta per WebSocket message, end to end in the Node host: from the
// message's bytes (handed to the socket's onmessage) to the session's
// listener being called with a view that holds the new text, at 10,000,
// 100,000 and 1,000,000 deltas of 8 bytes (80 KB, 800 KB, 8 MB of text).
// Also with a 'change' listener that reads what was appended (what a
// renderer appends to the DOM); and both again with 200 messages in the
// view and the delta going to one in the middle. Beside it, the same-run baseline: the AI
// SDK's readUIMessageStream on the same stream of text-delta chunks, fed one
// chunk per pull as a network stream arrives (and, for reference, with every
// chunk queued up front).
//
// The socket and fetch are in-process stand-ins driven by this script: the
// figure is the host's own cost, not the network's. Prints one JSON object
// per line: {"name", "ns_per_op", ...}.
//   node bench/e2e.bench.js [--max N]

import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { readUIMessageStream } from 'ai';
import { connect } from '../node.js';
import { encode } from '../msgpack.js';
// A socket the script feeds (ScriptedSocket), the AI SDK's chunks (uiChunks).
import { DELTA, SESSION, ScriptedSocket, uiChunks } from './task-runs.js';

const wasm = fileURLToPath(new URL('../../wasm/module/agentsync.wasm', import.meta.url));
const maxArg = process.argv.indexOf('--max');
const MAX = maxArg > 0 ? Number(process.argv[maxArg + 1]) : 1_000_000;

function agentMessage(seq, id, state, text) {
  return {
    message_id: id, session_id: SESSION, sequence: seq, revision: 1, role: seq % 2 ? 'user' : 'agent',
    ...(seq % 2 ? {} : { state, turn_id: 't' }), visibility: 'visible', created_at: seq,
    parts: [{ part_id: 'p1', sequence: 1, type: 'text', ...(seq % 2 ? {} : { step_id: 's', state }), text }],
  };
}

// A page of `msgs` messages; the agent message nearest the middle streams.
function page(msgs) {
  const items = [];
  let target = null;
  for (let s = 1; s <= msgs; s++) {
    const streaming = !target && s % 2 === 0 && s >= msgs / 2;
    if (streaming) target = `m${s}`;
    items.push(agentMessage(s, `m${s}`, streaming ? 'streaming' : 'done', streaming ? '' : 'an earlier message'));
  }
  return { target, body: encode({ items, total: msgs, start_sequence: 1, end_sequence: msgs, has_more: false }) };
}

async function liveSession(msgs, readAppended) {
  const p = page(msgs);
  const fetch = async () => new Response(p.body, { status: 200, headers: { 'content-type': 'application/msgpack' } });
  const session = await connect({
    url: 'http://bench.invalid', sessionId: SESSION, wasm, WebSocket: ScriptedSocket, fetch, wait: false,
    schedule: (flush) => flush(), // listeners run at once: the cost per delta is the whole path
  });
  const ws = ScriptedSocket.last;
  await new Promise((r) => setTimeout(r, 0));
  ws.onmessage({ data: encode([{ seq: 1, kind: 'hello', protocol: 1, session_id: SESSION, head_sequence: msgs }]) });
  await session.waitFor((v) => v.status === 'live');
  let seen = 0;
  let appended = 0;
  session.subscribe((v) => {
    seen++;
  });
  if (readAppended) {
    session.on('change', (c) => {
      for (const m of c.messages) for (const pc of m.parts) appended += pc.appended?.length ?? 0;
    });
  }
  return { session, ws, target: p.target, seen: () => seen, appended: () => appended };
}

// A delta frame with its seq and offset as uint32 slots, patched per
// message: [template, seq's position, offset's position].
function deltaTemplate(target) {
  const slot = 0x10000000; // encoded as 0xce and four bytes
  const t = encode([{ seq: slot, kind: 'delta', message_id: target, revision: 1, part_id: 'p1', offset: slot, text: DELTA }]);
  const at = [];
  for (let i = 0; i + 4 < t.length; i++) {
    if (t[i] === 0xce && t[i + 1] === 0x10 && t[i + 2] === 0 && t[i + 3] === 0 && t[i + 4] === 0) at.push(i + 1);
  }
  if (at.length !== 2) throw new Error('delta template: no seq and offset slots');
  return [t, at[0], at[1]];
}

function putUint32(b, at, v) {
  b[at] = v >>> 24;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

async function hostRun(name, n, { msgs = 2, readAppended = false } = {}) {
  const { session, ws, target, seen, appended } = await liveSession(msgs, readAppended);
  const [template, seqAt, offsetAt] = deltaTemplate(target);
  // Each WebSocket message is a fresh ArrayBuffer, as a socket hands them
  // over, made ahead of the timed loop in small batches: a large batch
  // would outlive the young generation and bill the host for the garbage
  // collector's copying it.
  const batch = 1000;
  const data = new Array(batch);
  let offset = 0;
  let ns = 0;
  for (let done = 0; done < n; done += batch) {
    const k = Math.min(batch, n - done);
    for (let i = 0; i < k; i++) {
      const bytes = template.slice();
      putUint32(bytes, seqAt, done + i + 2);
      putUint32(bytes, offsetAt, offset);
      offset += DELTA.length;
      data[i] = { data: bytes.buffer };
    }
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < k; i++) ws.onmessage(data[i]);
    ns += Number(process.hrtime.bigint() - t0);
  }
  const m = session.view.messages.find((x) => x.message_id === target);
  const ok = m?.parts[0].text.length === n * DELTA.length && seen() >= n && (!readAppended || appended() === n * DELTA.length);
  session.close();
  return { name, ns_per_op: Math.round(ns / n), runs: 1, deltas: n, applied: ok ? 1 : 0 };
}

// The AI SDK: the same deltas as UI message chunks through readUIMessageStream,
// the consumer taking each message it yields (as useChat's store does).
async function aiRun(name, n, { pulled }) {
  const next = uiChunks(n);
  const stream = pulled
    ? new ReadableStream({
        pull(c) {
          const chunk = next();
          if (chunk) c.enqueue(chunk);
          else c.close();
        },
      }, { highWaterMark: 0 })
    : new ReadableStream({
        start(c) {
          for (let chunk = next(); chunk; chunk = next()) c.enqueue(chunk);
          c.close();
        },
      });
  let last = null;
  let yields = 0;
  const t0 = process.hrtime.bigint();
  for await (const msg of readUIMessageStream({ stream })) {
    last = msg;
    yields++;
  }
  const ns = Number(process.hrtime.bigint() - t0);
  const text = last?.parts.find((p) => p.type === 'text')?.text ?? '';
  return { name, ns_per_op: Math.round(ns / n), runs: 1, deltas: n, yields, applied: text.length === n * DELTA.length ? 1 : 0 };
}

// Every run starts from a collected heap, so that none pays for the garbage
// another left (the AI SDK's queued runs leave much).
v8.setFlagsFromString('--expose-gc');
const collect = vm.runInNewContext('gc');

// Each figure is the median of runs(n) runs, the host's and the AI SDK's
// interleaved so that a noisy stretch of the machine hits both alike; a
// run of 10,000 deltas lasts some 20 ms, so one noisy stretch moves it
// far: those take 15 runs.
const runs = (n) => (n <= 10_000 ? 15 : 5);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

// The median of runs(n) results of each of the given runs (functions that
// return a result), run round-robin.
async function medians(fns, n) {
  const all = fns.map(() => []);
  for (let r = 0; r < runs(n); r++) {
    // Each round starts at another run, so that none always follows the
    // same one (run first after the AI SDK's, the host's delta measured
    // 2.5 us against 1.8 us for the same path run later).
    for (let k = 0; k < fns.length; k++) {
      const i = (r + k) % fns.length;
      collect();
      all[i].push(await fns[i]());
    }
  }
  return all.map((rs) => ({ ...rs[0], ns_per_op: Math.round(median(rs.map((r) => r.ns_per_op))), runs: rs.length, applied: rs.every((r) => r.applied) ? 1 : 0 }));
}

const sizes = [10_000, 100_000, 1_000_000].filter((n) => n <= MAX);
// Every path the figures take is compiled before any is timed.
for (const opts of [{}, { readAppended: true }, { msgs: 200 }, { msgs: 200, readAppended: true }]) await hostRun('warmup', 20_000, opts);
await aiRun('warmup', 20_000, { pulled: true });
let failed = false;
for (const n of sizes) {
  const fns = [
    () => hostRun(`host_delta_${n}`, n),
    () => hostRun(`host_delta_appended_${n}`, n, { readAppended: true }),
    () => hostRun(`host_delta_200msgs_${n}`, n, { msgs: 200 }),
    () => hostRun(`host_delta_200msgs_appended_${n}`, n, { msgs: 200, readAppended: true }),
    () => aiRun(`ai_sdk_pulled_${n}`, n, { pulled: true }),
  ];
  // Queued up front the AI SDK slows with the queue (50 µs a delta at 100,000): 1,000,000 would take minutes.
  if (n <= 100_000) fns.push(() => aiRun(`ai_sdk_queued_${n}`, n, { pulled: false }));
  for (const r of await medians(fns, n)) {
    console.log(JSON.stringify(r));
    failed ||= !r.applied;
  }
}
if (failed) {
  console.error('bench: a run did not end with the whole text; the figures are not meaningful');
  process.exitCode = 1;
}
