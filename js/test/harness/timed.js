// node:test's test and hooks with a timeout unless one is given, so a test
// that waits for something that never comes fails in a minute with what it
// waited for, instead of holding the run until the runner's own limit.
// (Node 20's --test-timeout bounds a whole file, not each test.) Every test
// file takes test, before and after from here; test/timeouts.test.js checks.

import * as nodeTest from 'node:test';

/** A test's default bound. */
export const TEST_TIMEOUT_MS = 60_000;
/** A hook's default bound: before hooks build the server (a cold build takes minutes on 2 cores). */
export const HOOK_TIMEOUT_MS = 10 * 60_000;

// The (name, options, fn) forms of node:test, options completed with a
// timeout (exported for test/timeouts.test.js).
export function withTimeout(args, ms) {
  const fnAt = args.findIndex((a) => typeof a === 'function');
  const optsAt = args.findIndex((a, i) => i < (fnAt < 0 ? args.length : fnAt) && a !== null && typeof a === 'object');
  if (optsAt >= 0) {
    if (args[optsAt].timeout === undefined) args[optsAt] = { ...args[optsAt], timeout: ms };
    return args;
  }
  const at = fnAt < 0 ? args.length : fnAt;
  args.splice(at, 0, { timeout: ms });
  return args;
}

/** node:test's test, bounded by TEST_TIMEOUT_MS unless its options say otherwise. */
export function test(...args) {
  return nodeTest.test(...withTimeout(args, TEST_TIMEOUT_MS));
}

/** node:test's before (fn, options), bounded by HOOK_TIMEOUT_MS unless options say otherwise. */
export function before(fn, opts = {}) {
  return nodeTest.before(fn, { timeout: HOOK_TIMEOUT_MS, ...opts });
}

/** node:test's after (fn, options), bounded by HOOK_TIMEOUT_MS unless options say otherwise. */
export function after(fn, opts = {}) {
  return nodeTest.after(fn, { timeout: HOOK_TIMEOUT_MS, ...opts });
}

/** node:test's beforeEach, bounded like before. */
export function beforeEach(fn, opts = {}) {
  return nodeTest.beforeEach(fn, { timeout: HOOK_TIMEOUT_MS, ...opts });
}

/** node:test's afterEach, bounded like after. */
export function afterEach(fn, opts = {}) {
  return nodeTest.afterEach(fn, { timeout: HOOK_TIMEOUT_MS, ...opts });
}

export { describe, it, mock } from 'node:test';
