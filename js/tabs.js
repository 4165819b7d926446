// One connection for many tabs (connect({ shareTabs: true })): the tabs of
// one origin that show the same session, as the same principal, share one
// subscription. A leader tab, the one holding a Web Lock named after the
// server URL, the session and the principal, runs the normal Session (core
// and WebSocket) and broadcasts each new view, its status and the
// subscription's signals on a BroadcastChannel of the same name. A follower
// runs no core and no socket: it shows the broadcast views through the same
// read API (view, status, subscribe, on, waitFor), and its writes (send,
// answer, action, fork, rename, typing...) go straight over HTTP, as they
// need no subscription. A follower says "hello" on start and the leader
// answers with its current view. When the leader's tab closes its lock is
// released, and the follower whose lock request is granted next becomes the
// leader: it starts a real Session (rendering from the local cache at once
// when opts.cache is on). Ten tabs make one WebSocket, not ten.

import { AgentsyncError } from './errors.js';
import { Http } from './http.js';
import { wholeChange } from './patcher.js';
import { waitForView } from './waitfor.js';

const DEFAULT_TIMEOUT_MS = 30000;

// The Session methods a follower runs itself, over HTTP.
const WRITES = ['send', 'answer', 'action', 'retry', 'rename', 'fork', 'edit', 'regenerate', 'branches', 'alternatives', 'messages', 'typing'];

/** Whether this environment can share a session between tabs (Web Locks and BroadcastChannel). */
export function canShareTabs() {
  return typeof globalThis.BroadcastChannel === 'function' && !!globalThis.navigator?.locks?.request;
}

// A short stable hash (FNV-1a, hex): the channel's name tells principals
// apart without carrying a token.
function fnv(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

/** The lock's and the channel's name for opts. */
export function tabsChannelName(opts) {
  const who = opts.principal ?? (typeof opts.token === 'string' ? fnv(opts.token) : '');
  return `agentsync:${opts.url}|${opts.sessionId}|${who}`;
}

/**
 * connect() with shareTabs: resolves with a SharedSession once its view is
 * live (unless wait: false). deps: {connect, Session} of index.js.
 */
export async function connectShared(opts, deps) {
  if (!canShareTabs()) return deps.connect({ ...opts, shareTabs: false });
  const s = new SharedSession(opts, deps);
  if (opts.onStatus) s.on('status', opts.onStatus);
  if (opts.onView) s.subscribe(opts.onView);
  s._start();
  if (opts.wait === false) return s;
  try {
    await s.waitFor((v) => v.status === 'live', { timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS });
  } catch (err) {
    s.close();
    throw err;
  }
  return s;
}

/** A session view shared between tabs: the leader's Session, or a follower's copy of its views. */
export class SharedSession {
  constructor(opts, deps) {
    this.sessionId = opts.sessionId;
    this.opts = opts;
    this.deps = deps;
    this.name = tabsChannelName(opts);
    this.http = new Http(opts.url, opts.token, opts.fetch);
    /** 'leader' once this tab holds the lock and runs the Session, 'follower' before. */
    this.role = 'follower';
    /** The leader's Session, null in a follower. */
    this.inner = null;
    this.status = 'connecting';
    this.presence = [];
    this.closed = false;
    this.listeners = new Set();
    this.handlers = new Map();
    this._view = { session_id: opts.sessionId, messages: [], has_more_older: false, status: 'connecting' };
    // Whether this follower holds a view of the leader's (its 'change'
    // events then follow the leader's).
    this._synced = false;
    this._abort = new AbortController();
    this._release = null;
    // A follower's writes: the Session's own methods, on an object with no core.
    const writer = Object.create(deps.Session.prototype);
    Object.assign(writer, { sessionId: this.sessionId, http: this.http, cache: null, handlers: new Map(), loop: { closed: false } });
    this._writer = writer;
  }

  _start() {
    this.channel = new BroadcastChannel(this.name);
    this.channel.onmessage = (e) => this._onMessage(e.data);
    this.channel.postMessage({ t: 'hello' });
    globalThis.navigator.locks
      .request(this.name, { signal: this._abort.signal }, () => this._lead())
      .catch((err) => {
        if (!this.closed) this._emit('error', err);
      });
  }

  // Holds the lock: runs the real Session until this one closes.
  async _lead() {
    if (this.closed) return;
    this.role = 'leader';
    const held = new Promise((resolve) => (this._release = resolve));
    let inner;
    try {
      inner = await this.deps.connect({ ...this.opts, shareTabs: false, wait: false, onStatus: undefined, onView: undefined });
    } catch (err) {
      this._emit('error', err);
      this.close();
      return;
    }
    if (this.closed) {
      inner.close();
      return;
    }
    this.inner = inner;
    inner.on('status', (e) => {
      this._broadcast({ t: 'status', status: e.status, reason: e.reason });
      this._setStatus(e.status, e.reason);
    });
    for (const type of ['change', 'alternatives', 'presence', 'error']) {
      inner.on(type, (arg) => {
        if (type === 'presence') this.presence = arg;
        if (type !== 'error') this._broadcast({ t: 'signal', type, arg });
        this._emit(type, arg);
      });
    }
    inner.subscribe((v) => {
      this._broadcast({ t: 'view', view: v });
      this._setView(v);
    });
    this._setStatus(inner.status, 'leader');
    await held;
    inner.close();
  }

  _broadcast(msg) {
    if (this.closed) return;
    try {
      this.channel.postMessage(msg);
    } catch (err) {
      this.opts.log?.('agentsync tabs: a message not broadcast', err);
    }
  }

  _onMessage(msg) {
    if (this.closed || !msg) return;
    if (this.role === 'leader') {
      if (!this.inner) return;
      if (msg.t === 'hello') {
        this._broadcast({ t: 'view', view: this.inner.view });
        this._broadcast({ t: 'status', status: this.inner.status });
        if (this.inner.presence?.length) this._broadcast({ t: 'signal', type: 'presence', arg: this.inner.presence });
      } else if (msg.t === 'load_older') {
        this.inner.loadOlder().catch(() => {});
      }
      return;
    }
    if (msg.t === 'view') {
      if (!this._synced) {
        // The first view this follower holds: its 'change' listeners
        // start from the whole of it, as a Session's first render does.
        this._synced = true;
        this._emit('change', { reset: true, messages: msg.view.messages.map(wholeChange) });
      }
      this._setView(msg.view);
    } else if (msg.t === 'status') this._setStatus(msg.status, msg.reason);
    else if (msg.t === 'signal') {
      if (msg.type === 'presence') this.presence = msg.arg;
      // A change before this follower's first view is in that view.
      if (msg.type === 'change' && !this._synced) return;
      this._emit(msg.type, msg.arg);
    }
  }

  _setView(v) {
    this._view = v;
    for (const fn of this.listeners) safeCall(fn, v);
  }

  _setStatus(status, reason) {
    if (!status || status === this.status) return;
    this.status = status;
    this._emit('status', { status, reason: reason ?? '', cause: this.inner?.cause ?? null });
  }

  // ------------------------------------------------------------ read API

  /** The current view: the leader's, or the last one it broadcast. */
  get view() {
    return this.inner ? this.inner.view : this._view;
  }

  /** Whether this tab holds the lock and the connection. */
  get leader() {
    return this.role === 'leader' && !!this.inner;
  }

  get outbox() {
    return this.inner?.outbox ?? [];
  }

  subscribe(listener) {
    this.listeners.add(listener);
    safeCall(listener, this.view);
    return () => this.listeners.delete(listener);
  }

  on(type, fn) {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  _emit(type, arg) {
    const set = this.handlers.get(type);
    if (set) for (const fn of set) safeCall(fn, arg);
  }

  /** As Session.waitFor: the first view (the current one included) for which predicate holds. */
  waitFor(predicate, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    if (this.closed) return Promise.reject(new AgentsyncError('closed', 'waitFor: session closed'));
    // A leader that goes away closes this tab's status only until it takes over.
    return waitForView(this, predicate, timeoutMs, ({ status }) => status === 'closed' && this.closed);
  }


  /** Loads an older page: the leader's Session does; a follower asks the leader (resolves once asked). */
  loadOlder() {
    if (this.inner) return this.inner.loadOlder();
    this._broadcast({ t: 'load_older' });
    return Promise.resolve();
  }

  /** The view digest: only the leader has a core. */
  digest() {
    if (!this.inner) throw new AgentsyncError('bad_request', 'digest: a follower tab has no core (the leader has)');
    return this.inner.digest();
  }

  /** Stops sharing: a leader closes its Session and releases the lock (another tab takes over). */
  close() {
    if (this.closed) return;
    this.closed = true;
    this._abort.abort();
    this._release?.();
    this.inner?.close();
    this.channel?.close();
    this._writer.loop.closed = true;
    const was = this.status;
    this.status = 'closed';
    if (was !== 'closed') {
      const set = this.handlers.get('status');
      if (set) for (const fn of set) safeCall(fn, { status: 'closed', reason: 'closed by the host', cause: null });
    }
  }
}

for (const name of WRITES) {
  SharedSession.prototype[name] = function (...args) {
    const target = this.inner ?? this._writer;
    return target[name](...args);
  };
}

SharedSession.prototype.stop = function () {
  return (this.inner ?? this._writer).action('stop');
};

function safeCall(fn, arg) {
  try {
    fn(arg);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}
