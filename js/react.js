// React binding of @agentsync/client: one hook over a Session's public
// contract. session.view is the same object until something changes, a
// changed message is a new object and unchanged ones keep their identity,
// so useSyncExternalStore re-renders on change only and memoized rows skip
// the messages a delta did not touch.

import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { AgentsyncError } from './errors.js';
import { EMPTY_VIEW as NO_SESSION_VIEW } from './empty-view.js';
import { watchSessions } from './sessionlist.js';


const noSession = () => Promise.reject(new AgentsyncError('closed', 'useSession: no session yet'));
const NO_VIEWERS = Object.freeze([]);
const NO_ALTERNATIVES = Object.freeze({});

/**
 * The view of a session (null or undefined while it is being created: an
 * empty idle view), its status, its conversation tree (the current branch
 * and, per position with more than one, its alternatives), and its calls
 * bound to it.
 * @param {import('./index.js').Session | null | undefined} session
 */
export function useSession(session) {
  const subscribe = useCallback(
    // session.subscribe calls back at once and after every coalesced
    // change; status changes are part of the view.
    (onChange) => (session ? session.subscribe(() => onChange()) : () => {}),
    [session],
  );
  const snapshot = useCallback(() => (session ? session.view : NO_SESSION_VIEW), [session]);
  const view = useSyncExternalStore(subscribe, snapshot, snapshot);

  // The alternatives live beside the messages, never inside them: read
  // once per session and again when the path grows or this hook forks,
  // and kept up to date by the subscription's signals in between.
  const [alts, setAlts] = useState({ session: null, bySequence: NO_ALTERNATIVES });
  const [forks, setForks] = useState(0);
  const length = view.messages.length;
  useEffect(() => {
    if (!session || view.status !== 'live') return undefined;
    let current = true;
    session.alternatives().then(
      (items) => {
        if (!current) return;
        const bySequence = {};
        for (const a of items) bySequence[a.sequence] = { count: a.count, index: a.index };
        setAlts({ session, bySequence });
      },
      () => {},
    );
    return () => {
      current = false;
    };
  }, [session, length, forks, view.status]);
  // A fork made or deleted elsewhere (another tab, device or node) comes
  // as a signal of the subscription: one position's count, no re-read.
  useEffect(() => {
    if (!session) return undefined;
    return session.on('alternatives', ({ sequence, count, index }) =>
      setAlts((prev) => {
        if (prev.session !== session) return prev;
        const bySequence = { ...prev.bySequence };
        if (count > 1) bySequence[sequence] = { count, index };
        else delete bySequence[sequence];
        return { session, bySequence };
      }),
    );
  }, [session]);
  const alternatives = alts.session === session ? alts.bySequence : NO_ALTERNATIVES;
  // Who else follows the session and who is typing (presence signals).
  const [presence, setPresence] = useState({ session: null, viewers: NO_VIEWERS });
  useEffect(() => {
    if (!session) return undefined;
    setPresence({ session, viewers: session.presence });
    return session.on('presence', (viewers) => setPresence({ session, viewers }));
  }, [session]);
  const viewers = presence.session === session ? presence.viewers : NO_VIEWERS;

  const calls = useMemo(() => {
    if (!session) {
      return {
        send: noSession, answer: noSession, stop: noSession, loadOlder: noSession,
        fork: noSession, edit: noSession, regenerate: noSession, branches: noSession, switchBranch: noSession,
        retrySend: noSession, discardSend: noSession,
      };
    }
    const forked = (p) => p.then((s) => (setForks((n) => n + 1), s));
    return {
      send: (parts, opts) => session.send(parts, opts),
      answer: (interactionId, response) => session.answer(interactionId, response),
      stop: () => session.action('stop'),
      loadOlder: () => session.loadOlder(),
      fork: (beforeSequence, opts) => forked(session.fork(beforeSequence, opts)),
      edit: (sequence, parts) => forked(session.edit(sequence, parts)),
      regenerate: (sequence) => forked(session.regenerate(sequence)),
      branches: (sequence) => session.branches(sequence),
      switchBranch: (sessionId) => session.switchBranch(sessionId),
      retrySend: (id) => session.retrySend(id),
      discardSend: (id) => session.discardSend(id),
    };
  }, [session]);
  return useMemo(
    // view.cached, view.offline and the pending sends come with the view (cache.js).
    () => ({ view, status: view.status, branch: session ? session.sessionId : null, alternatives, presence: viewers, outbox: session ? session.outbox : [], ...calls }),
    [view, calls, alternatives, viewers, session],
  );
}

/**
 * The principal's session list, live (watchSessions): null until the
 * first list, then every session newest activity first, re-rendering on
 * each change made anywhere.
 * @param {string | null | undefined} url the server's base URL (none: null)
 * @param {{token?: string, WebSocket?: typeof WebSocket}} [opts]
 */
export function useSessions(url, opts) {
  const [list, setList] = useState(null);
  const token = opts?.token;
  const WS = opts?.WebSocket;
  useEffect(() => {
    setList(null);
    if (!url) return undefined;
    return watchSessions(url, { token, WebSocket: WS }, setList);
  }, [url, token, WS]);
  return list;
}
