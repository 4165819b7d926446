// waitForView: the promise behind Session.waitFor and SharedSession.waitFor.

import { AgentsyncError } from './errors.js';

/**
 * Resolves with the first view of src (the current one included) for
 * which predicate holds; rejects with a 'timeout' AgentsyncError after
 * timeoutMs (0 = never), with the predicate's own error, or, when
 * isClosing(statusEvent) says a status event closes src, with its cause
 * (else a 'closed' error). src has view, subscribe(fn) (calling fn at once)
 * and on('status', fn); each returns its unsubscribe. A status event also
 * checks the current view: a follower tab's status comes apart from its
 * views.
 */
export function waitForView(src, predicate, timeoutMs, isClosing) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const cleanups = [];
    const settle = (fn, arg) => {
      if (settled) return;
      settled = true;
      for (const cleanup of cleanups) cleanup();
      fn(arg);
    };
    const check = (view) => {
      if (settled) return;
      try {
        if (predicate(view)) settle(resolve, view);
      } catch (err) {
        settle(reject, err);
      }
    };
    if (timeoutMs > 0) {
      const t = setTimeout(() => settle(reject, new AgentsyncError('timeout', `waitFor: no matching view after ${timeoutMs} ms`)), timeoutMs);
      cleanups.push(() => clearTimeout(t));
    }
    cleanups.push(src.on('status', (ev) => {
      if (isClosing(ev)) settle(reject, ev.cause ?? new AgentsyncError('closed', 'waitFor: session closed'));
      else check(src.view);
    }));
    const unsubscribe = src.subscribe(check);
    if (settled) unsubscribe();
    else cleanups.push(unsubscribe);
  });
}
