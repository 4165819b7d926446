// The cold start of bench/chromium.bench.js, imported in a fresh Chromium
// page after the package (as an app's bundle holds it, imported already):
// connect() to the first view holding the session's messages, the module
// not yet fetched, split at the module's last byte (resource timing), its
// compile's end and its instantiation's end. The socket and the page of
// messages are task-runs.js's in-process stand-ins: the socket opens in a
// microtask and its hello arrives in the task after.

import { connect } from '/js/index.js';
import { ScriptedSocket, helloFrame, pageBody } from './task-runs.js';

const WASM = '/js/agentsync.wasm';

class HelloSocket extends ScriptedSocket {
  constructor(url) {
    super(url);
    queueMicrotask(() => setTimeout(() => this.onmessage?.({ data: helloFrame() }), 0));
  }
}

// Records when WebAssembly's compile and instantiate calls resolve: a
// then() attached here runs before the host's await resumes.
function watch(name, marks) {
  const fn = WebAssembly[name];
  WebAssembly[name] = function (...args) {
    const p = fn.apply(WebAssembly, args);
    p.then(() => {
      marks[name] ??= performance.now();
    }, () => {});
    return p;
  };
}

// The module's bytes fetched again without compiling them, right after the
// first view: an idea of the transfer in fetch_ms, no clean figure (V8's
// background tier-up of the module may still run beside it).
async function downloadAlone() {
  const t = performance.now();
  const res = await fetch(WASM, { cache: 'no-store' });
  await res.arrayBuffer();
  return performance.now() - t;
}

/** Resolves {fetch_ms, compile_ms, instantiate_ms, first_view_ms, total_ms}. */
export async function coldStart() {
  const marks = {};
  for (const name of ['compileStreaming', 'compile', 'instantiate']) watch(name, marks);
  const body = pageBody();
  const fetch = async () => new Response(body, { status: 200, headers: { 'content-type': 'application/msgpack' } });
  let shown;
  const first = new Promise((r) => (shown = r));
  const t0 = performance.now();
  const session = await connect({
    url: 'http://bench.invalid', sessionId: 'bench', wasm: WASM, WebSocket: HelloSocket, fetch, wait: false,
    onView: (v) => {
      if (v.messages.length > 0) shown(performance.now());
    },
  });
  const t = await first;
  session.close();
  const entry = performance.getEntriesByType('resource').find((e) => new URL(e.name).pathname === WASM);
  const compiled = marks.compileStreaming ?? marks.compile;
  if (!entry || !compiled || !marks.instantiate) throw new Error(`cold start: missing marks ${JSON.stringify({ entry: !!entry, ...marks })}`);
  const round = (x) => Math.round(x * 10) / 10;
  return {
    fetch_ms: round(entry.responseEnd - t0),
    compile_ms: round(compiled - entry.responseEnd),
    instantiate_ms: round(marks.instantiate - compiled),
    first_view_ms: round(t - marks.instantiate),
    total_ms: round(t - t0),
    // Where the fetch's time goes: the request leaving, the first byte, and
    // the same bytes fetched again (arrayBuffer, no compile of them).
    request_at_ms: round(entry.requestStart - t0),
    first_byte_at_ms: round(entry.responseStart - t0),
    download_alone_ms: round(await downloadAlone()),
    streaming: marks.compileStreaming ? 1 : 0,
  };
}
