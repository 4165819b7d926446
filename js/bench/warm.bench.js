// What Core.warm buys a page's first long answer: a fresh module (a new
// process each run: V8 keeps compiled code for the same bytes within one)
// takes a 1 MB answer in WebSocket messages of 2,000 delta frames, cold or
// after core.warm(). Prints, per mode, the median over the runs of the
// longest message and of the whole answer, in ms:
//   {"name": "warm_first_answer_cold" | "warm_first_answer_warmed", "longest_message_ms", "total_ms", "runs"}
//   node bench/warm.bench.js

import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Core } from '../core.js';
import { encode } from '../msgpack.js';
import { startSynthetic } from '../warm.js';

const RUNS = 5;
const BYTES = 1 << 20;
const PER_MESSAGE = 2000;
const DELTA = 'abcdefgh';
const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--one') {
  console.log(JSON.stringify(await oneAnswer(process.argv[3] === 'warmed')));
} else {
  for (const mode of ['cold', 'warmed']) {
    const runs = [];
    for (let r = 0; r < RUNS; r++) runs.push(JSON.parse(execFileSync(process.execPath, [self, '--one', mode], { encoding: 'utf8' })));
    const median = (k) => runs.map((x) => x[k]).sort((a, b) => a - b)[RUNS >> 1];
    console.log(JSON.stringify({ name: `warm_first_answer_${mode}`, longest_message_ms: median('longest'), total_ms: median('total'), runs: RUNS }));
  }
}

// oneAnswer streams one answer through a core on a freshly compiled module.
async function oneAnswer(warmed) {
  const wasm = new Uint8Array(await readFile(new URL('../../wasm/module/agentsync.wasm', import.meta.url)));
  const core = await Core.load(wasm);
  if (warmed) await core.warm();
  startSynthetic(core);
  let seq = 2;
  // The messages are encoded before the clock starts: the host's share is
  // what is timed, not the test's encoder.
  const messages = [];
  for (let offset = 0; offset < BYTES;) {
    const frames = [];
    for (let i = 0; i < PER_MESSAGE; i++, offset += DELTA.length) frames.push({ seq: seq++, kind: 'delta', message_id: 'm', revision: 1, part_id: 'p', offset, text: DELTA });
    messages.push(encode(frames));
  }
  let longest = 0;
  const t0 = performance.now();
  for (const m of messages) {
    const t = performance.now();
    core.handleCompact(m);
    longest = Math.max(longest, performance.now() - t);
  }
  const total = performance.now() - t0;
  if (core.view().messages[0].parts[0].text.length !== messages.length * PER_MESSAGE * DELTA.length) throw new Error('the answer did not arrive whole');
  return { longest: Math.round(longest * 10) / 10, total: Math.round(total) };
}
