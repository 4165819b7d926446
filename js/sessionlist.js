// The principal's session list, live (GET /v1/sessions/subscribe,
// docs/protocol.md §4.7). Its own module: the React hook uses it without
// the sync core.

import { AgentsyncError } from './errors.js';
import { Http } from './http.js';

/**
 * Follows the principal's session list live (GET /v1/sessions/subscribe,
 * docs/protocol.md §4.7): onList gets the whole list (newest activity
 * first) at once and after every change made anywhere (another tab, the
 * Go host, another node). It reconnects by itself with backoff and reads
 * the whole list again each time.
 * @param {string} url the server's base URL
 * @param {{token?: string, WebSocket?: typeof WebSocket}} opts
 * @param {(sessions: object[]) => void} onList
 * @returns {() => void} stop
 */
export function watchSessions(url, opts, onList) {
  const WS = opts?.WebSocket ?? globalThis.WebSocket;
  if (!WS) throw new AgentsyncError('bad_request', 'watchSessions needs a WebSocket implementation');
  let target = `${new Http(url).base.replace(/^http/i, 'ws')}/v1/sessions/subscribe`;
  if (opts?.token) target += `?token=${encodeURIComponent(opts.token)}`;
  const byId = new Map();
  let ws = null;
  let stopped = false;
  let failures = 0;
  let timer = null;
  const emit = () => {
    const list = [...byId.values()].sort((a, b) => (b.updated_at ?? 0) - (a.updated_at ?? 0) || (a.session_id < b.session_id ? -1 : 1));
    try {
      onList(list);
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  };
  const open = () => {
    if (stopped) return;
    ws = new WS(target);
    ws.onmessage = (e) => {
      let m;
      try {
        m = JSON.parse(typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data));
      } catch {
        return;
      }
      if (m.kind === 'sessions' && Array.isArray(m.items)) {
        failures = 0;
        byId.clear();
        for (const s of m.items) byId.set(s.session_id, s);
      } else if (m.kind === 'upsert' && m.session?.session_id) {
        byId.set(m.session.session_id, m.session);
      } else if (m.kind === 'delete' && byId.delete(m.session_id) === false) {
        return;
      } else if (m.kind !== 'delete') {
        return;
      }
      emit();
    };
    ws.onclose = () => {
      ws = null;
      if (stopped) return;
      // §6.4's backoff: 250 ms doubling to 8 s, with jitter.
      const delay = Math.min(8000, 250 * 2 ** failures++) * (0.5 + Math.random() / 2);
      timer = setTimeout(open, delay);
    };
  };
  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    ws?.close();
  };
}

