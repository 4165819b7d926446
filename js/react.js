// React binding of @agentsync/client: one hook over a Session's public
// contract. session.view is the same object until something changes, a
// changed message is a new object and unchanged ones keep their identity,
// so useSyncExternalStore re-renders on change only and memoized rows skip
// the messages a delta did not touch.

import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { AgentsyncError } from './errors.js';
import { EMPTY_VIEW as NO_SESSION_VIEW } from './empty-view.js';


const noSession = () => Promise.reject(new AgentsyncError('closed', 'useSession: no session yet'));

/**
 * The view of a session (null or undefined while it is being created: an
 * empty idle view), its status, and its calls bound to it.
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
  const calls = useMemo(() => {
    if (!session) return { send: noSession, answer: noSession, stop: noSession, loadOlder: noSession };
    return {
      send: (parts, opts) => session.send(parts, opts),
      answer: (interactionId, response) => session.answer(interactionId, response),
      stop: () => session.action('stop'),
      loadOlder: () => session.loadOlder(),
    };
  }, [session]);
  return useMemo(() => ({ view, status: view.status, ...calls }), [view, calls]);
}
