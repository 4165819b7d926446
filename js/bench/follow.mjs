// Follows one long answer from a running server with the Node host, as a
// process of its own so that its memory is the host's alone, and prints one
// JSON line: deltas/s, CPU seconds, peak RSS, peak JS heap and the module's
// linear memory. Run by test/memory.test.js and tools/benchtable.
//   node --experimental-websocket bench/follow.mjs URL CHARS
import { fileURLToPath } from 'node:url';
import { createSession } from '../index.js';

const [url, charsArg] = process.argv.slice(2);
const chars = Number(charsArg ?? 100000);
const delta = 8;
const wasm = fileURLToPath(new URL('../../wasm/module/agentsync.wasm', import.meta.url));

const session = await createSession(url, { wasm, WebSocket: globalThis.WebSocket });
let peakRSS = 0;
let peakHeap = 0;
let peakModule = 0;
const sample = () => {
  const m = process.memoryUsage();
  peakRSS = Math.max(peakRSS, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakModule = Math.max(peakModule, session.core?.memory.buffer.byteLength ?? 0);
};
const timer = setInterval(sample, 20);
// A renderer that appends what each change adds, as the demo page does.
let shown = 0;
session.on('change', (c) => {
  for (const m of c.messages) for (const p of m.parts) shown += p.appended?.length ?? 0;
});
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const sent = await session.send(`scenario:long chars=${chars} delta=${delta}`);
const view = await session.waitFor((v) => {
  const last = v.messages.at(-1);
  return last !== undefined && last.sequence > sent.sequence && last.state === 'done';
}, { timeoutMs: 600000 });
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
sample();
clearInterval(timer);
const text = view.messages.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
session.close();
const deltas = Math.ceil(chars / delta);
console.log(JSON.stringify({
  chars: text.length, deltas, seconds, deltas_per_sec: deltas / seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6,
  max_rss_bytes: peakRSS, max_heap_bytes: peakHeap, module_bytes: peakModule, appended_shown: shown,
}));
if (text.length !== chars) process.exitCode = 1;
