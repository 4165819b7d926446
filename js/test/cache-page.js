// The page side of test/cache-browser.test.js and bench/cache.bench.js,
// imported in Chromium from /js/test/: opens a session (with the IndexedDB
// cache or without) and tells when its first message was rendered.

import { connect } from '/js/index.js';

/**
 * Opens sessionId; resolves {session, firstMs, cached} once the first view
 * holding a message has been seen (firstMs: the milliseconds from the call,
 * the package imported already).
 */
export async function open({ sessionId, pageLimit, cache = true, wait = false }) {
  const t0 = performance.now();
  let first = null;
  let seen;
  const shown = new Promise((r) => (seen = r));
  const session = await connect({
    url: location.origin,
    sessionId,
    wasm: '/js/agentsync.wasm',
    pageLimit,
    cache,
    wait,
    onView: (v) => {
      if (first === null && v.messages.length > 0) {
        first = { ms: performance.now() - t0, cached: !!v.cached };
        seen();
      }
    },
  });
  window.__session = session;
  await shown;
  return { session, firstMs: first.ms, cached: first.cached };
}

/** Waits until pred(session) holds (polling: the page has no test runner). */
export async function until(pred, ms = 30000) {
  const end = performance.now() + ms;
  while (!pred()) {
    if (performance.now() > end) throw new Error(`timed out: ${pred}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The digest of a session without cache holding every message, and their number. */
export async function serverDigest(sessionId, pageLimit) {
  const s = await connect({ url: location.origin, sessionId, wasm: '/js/agentsync.wasm', pageLimit });
  while (s.view.has_more_older) await s.loadOlder();
  const out = { digest: s.digest(), count: s.view.messages.length };
  s.close();
  return out;
}
