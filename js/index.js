// agentsync for browsers and Node: a thin host around the WebAssembly sync
// core. The core decides everything (what to subscribe, which page to read,
// when to back off, what changed); the host carries out its commands with
// web APIs and keeps a render-friendly copy of the view, refreshed message
// by message, never decoded whole per delta. This file is the facade: the
// Session's public API, its listeners and their notifications. The parts
// behind it have a module each:
//   http.js     the REST calls: typed errors, the idempotent retried post
//   loop.js     the core's event loop: queue, socket, timers, rebuilds
//   patcher.js  the view copy patched with the core's changes

import { defaultWasmSource, loadModule } from './core.js';
import { AgentsyncError, TERMINAL_CODES } from './errors.js';
import { Http, newIdempotencyKey, pageQuery, postIdempotent, sessionPath } from './http.js';
import { Loop } from './loop.js';
import { decode } from './msgpack.js';
import { ViewPatcher } from './patcher.js';
import { ActionRetry } from './constants.js';
import { LocalCache, unreachable } from './cache.js';
import { connectShared } from './tabs.js';
import { waitForView } from './waitfor.js';

export { AgentsyncError, COMPACT, CORE_BROKEN, Core, loadModule } from './core.js';
export { NETWORK } from './errors.js';
export { ERROR_CODES, codeForStatus } from './errcodes.js';
export { decode, encode } from './msgpack.js';
export * from './constants.js';
export { isApproval, isQuestion } from './parts.js';
export { IndexedDBCacheStore, MemoryCacheStore, clearCache } from './cache.js';
export { SharedSession, canShareTabs } from './tabs.js';

const DEFAULT_TIMEOUT_MS = 30000;

/** The deliveries of a message sent while a turn runs (send's opts.delivery). */
const DELIVERIES = new Set(['steer', 'queue', 'interrupt']);

/**
 * Opens a session view and resolves once it is live (snapshot applied,
 * stream continuous), unless `wait: false`.
 * @param {import('./index.d.ts').ConnectOptions} opts
 * @returns {Promise<Session>}
 */
export async function connect(opts) {
  // One connection for many tabs (tabs.js): a leader tab holds the Session.
  if (opts?.shareTabs) return connectShared(opts, { connect, Session });
  const session = new Session(opts);
  // Attached before the session starts, so no status change is missed.
  if (opts.onStatus) session.on('status', opts.onStatus);
  // And before it opens: the first view may be the cached window, shown before the module loads.
  if (opts.onView) session.subscribe(opts.onView);
  try {
    await session._open();
    // A window rendered from the cache is usable at once: sync goes on.
    if (opts.wait === false || session.cache?.cached) return session;
    await session._waitLive(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  } catch (err) {
    session.close();
    throw err;
  }
  return session;
}

/**
 * Creates a new session on the server (POST /v1/sessions) and connects to it.
 * @param {string} url the server's base URL
 * @param {Omit<import('./index.d.ts').ConnectOptions, 'url' | 'sessionId'> & {model?: string}} [opts]
 */
export async function createSession(url, opts = {}) {
  // The module first: a page that cannot load it must not leave an empty
  // session behind on the server.
  const wasm = await loadModule(opts.wasm ?? (await defaultWasmSource()));
  const http = new Http(url, opts.token, opts.fetch);
  const created = await http.json('POST', '/v1/sessions', opts.model ? { model: opts.model } : {});
  return connect({ ...opts, url, sessionId: created.session_id, wasm });
}

/**
 * Lists the server's sessions (GET /v1/sessions), newest first, each with
 * its title and what the server accepts.
 * @param {string} url the server's base URL
 * @param {{token?: string, fetch?: typeof fetch, limit?: number}} [opts]
 */
export { watchSessions } from './sessionlist.js';

export async function listSessions(url, opts = {}) {
  const http = new Http(url, opts.token, opts.fetch);
  const list = await http.json('GET', `/v1/sessions${pageQuery({ limit: opts.limit })}`);
  return list.items;
}

/**
 * Sets a session's title (PATCH /v1/sessions/{id}) without connecting to
 * it; resolves with the session as the server now has it.
 * @param {string} url the server's base URL
 * @param {string} sessionId
 * @param {string} title
 * @param {{token?: string, fetch?: typeof fetch}} [opts]
 */
export function renameSession(url, sessionId, title, opts = {}) {
  if (typeof title !== 'string') return Promise.reject(new AgentsyncError('bad_request', 'renameSession: title must be a string'));
  return new Http(url, opts.token, opts.fetch).json('PATCH', sessionPath(sessionId), { title });
}

/**
 * Deletes a session and its messages (DELETE /v1/sessions/{id}) without
 * connecting to it. Its subscribers are told (their status goes to
 * backoff, their reads to not_found).
 * @param {string} url the server's base URL
 * @param {string} sessionId
 * @param {{token?: string, fetch?: typeof fetch}} [opts]
 */
export async function deleteSession(url, sessionId, opts = {}) {
  await new Http(url, opts.token, opts.fetch).json('DELETE', sessionPath(sessionId));
}

/**
 * Makes a share link of a session (POST /v1/sessions/{id}/shares, owner
 * only): `{mode: 'read' | 'write', include_forks?, expires_at?}`. The
 * answer's `token` opens the session: pass it as connect()'s `token` (a
 * bearer token starting with `ash_` is a share link), or as `?share=` in
 * a page's URL. Only this answer has the token.
 * @param {string} url the server's base URL
 * @param {string} sessionId
 * @param {{mode?: string, include_forks?: boolean, expires_at?: number}} [share]
 * @param {{token?: string, fetch?: typeof fetch}} [opts]
 */
export function createShare(url, sessionId, share = {}, opts = {}) {
  return new Http(url, opts.token, opts.fetch).json('POST', sessionPath(sessionId, '/shares'), share);
}

/** Lists a session's share links, without tokens (owner only). */
export async function listShares(url, sessionId, opts = {}) {
  return (await new Http(url, opts.token, opts.fetch).json('GET', sessionPath(sessionId, '/shares'))).items;
}

/**
 * Revokes a share link: its open subscriptions end with the error frame
 * `revoked`, and its token is refused (401) from then on.
 */
export async function revokeShare(url, sessionId, shareId, opts = {}) {
  await new Http(url, opts.token, opts.fetch).json('DELETE', sessionPath(sessionId, `/shares/${encodeURIComponent(shareId)}`));
}

/** Lists a session's owner (first) and members, each `{principal, role}`. */
export async function listMembers(url, sessionId, opts = {}) {
  return (await new Http(url, opts.token, opts.fetch).json('GET', sessionPath(sessionId, '/members'))).items;
}

/** Adds a member as 'editor' or 'viewer', or changes its role (owner only). */
export function setMember(url, sessionId, principal, role, opts = {}) {
  return new Http(url, opts.token, opts.fetch).json('PUT', sessionPath(sessionId, `/members/${encodeURIComponent(principal)}`), { role });
}

/** Removes a member: its open subscriptions end with the error frame `revoked`. */
export async function removeMember(url, sessionId, principal, opts = {}) {
  await new Http(url, opts.token, opts.fetch).json('DELETE', sessionPath(sessionId, `/members/${encodeURIComponent(principal)}`));
}

/**
 * Who wrote a user message: `{principal}` for a member, `{share_id}` for a
 * write link, null for the session's owner (whose messages carry no
 * `agentsync.author` data part).
 * @param {{parts?: Array<{type: string, data_type?: string, data?: any}>}} message
 */
export function messageAuthor(message) {
  const p = message?.parts?.find((x) => x.type === 'data' && x.data_type === 'agentsync.author');
  return p ? { ...p.data } : null;
}

/**
 * Searches the caller's sessions (GET /v1/search): the messages whose text
 * holds every word of q, newest first, each with its session, sequence and
 * an HTML snippet (matches in <mark>, the rest escaped). Open a hit with
 * connect() and session.reveal(hit.sequence), or read its neighbourhood
 * with session.messages({ around_sequence }).
 * @param {string} url the server's base URL
 * @param {string} q
 * @param {{token?: string, fetch?: typeof fetch, limit?: number, cursor?: string}} [opts]
 */
export function search(url, q, opts = {}) {
  const p = new URLSearchParams({ q: String(q ?? '') });
  if (opts.limit !== undefined && opts.limit !== null) p.set('limit', String(opts.limit));
  if (opts.cursor) p.set('cursor', opts.cursor);
  return new Http(url, opts.token, opts.fetch).json('GET', `/v1/search?${p}`);
}

/** One synced session. Build it with connect() or createSession(). */
export class Session {
  constructor(opts) {
    if (!opts || !opts.url) throw new AgentsyncError('bad_request', 'connect needs a url');
    if (!opts.sessionId) throw new AgentsyncError('bad_request', 'connect needs a sessionId');
    this.sessionId = opts.sessionId;
    // What switchBranch() connects the next session with.
    this.connectOpts = opts;
    this.http = new Http(opts.url, opts.token, opts.fetch);
    this.pageLimit = opts.pageLimit ?? 0;
    this.includeInternal = !!opts.includeInternal;
    this.wasmSource = opts.wasm ?? null;
    const WebSocketImpl = opts.WebSocket ?? globalThis.WebSocket;
    if (!WebSocketImpl) {
      throw new AgentsyncError('bad_request', 'no WebSocket implementation: pass opts.WebSocket (Node 20 needs --experimental-websocket)');
    }
    this.scheduler = makeScheduler(opts.schedule);
    this.log = opts.log ?? null;

    this.status = 'idle';
    /** Who follows the session, as the last presence signal said: [{principal, connections, typing}]. */
    this.presence = [];
    this.listeners = new Set();
    this.handlers = new Map();
    this.patcher = new ViewPatcher(this.sessionId, this.handlers, (id) => this.loop.unknownMessage(id));
    this.loop = new Loop(this, this.patcher, { http: this.http, WebSocket: WebSocketImpl });
    this.waitLive = null;
    /** Why the session is not live: the last failure to connect or read (an AgentsyncError), null while live. */
    this.cause = null;
    this._onOnline = () => this.reconnect();
    this.notifiedView = null;
    this._notify = this._notifyNow.bind(this);
    this.flushScheduled = false;
    /** The local cache and outbox (opts.cache, opts.outbox; cache.js), null without. */
    this.cache = opts.cache || opts.outbox ? new LocalCache(this, opts) : null;
  }

  // ------------------------------------------------------------ public API

  /** The current view: messages oldest first, streaming projections merged in. */
  get view() {
    this.loop.flush();
    return this.cache ? this.cache.shown(this.patcher.view) : this.patcher.view;
  }

  /** The sends not yet committed, in order (with opts.cache or opts.outbox): [{id, idempotency_key, parts, created_at, state, error?}]. */
  get outbox() {
    return this.cache?.outbox ?? [];
  }

  /** Whether the session is not live because the server cannot be reached (no answer, or a gateway's 502/504). */
  get offline() {
    return this.status !== 'live' && this.status !== 'closed' && unreachable(this.cause);
  }

  /** Posts a failed send of the outbox again (same idempotency key); resolves with the committed message. */
  retrySend(id) {
    return this.cache ? this.cache.retrySend(id) : Promise.reject(new AgentsyncError('bad_request', 'retrySend: no outbox (opts.cache or opts.outbox)'));
  }

  /** Drops a failed or queued send from the outbox; resolves whether one was dropped. */
  discardSend(id) {
    return this.cache ? this.cache.discardSend(id) : Promise.resolve(false);
  }

  /** Drops every send of the outbox that is not being posted. */
  clearOutbox() {
    return this.cache ? this.cache.clearOutbox() : Promise.resolve();
  }

  /** Removes every cached window and outbox of the cache's store (a sign-out); the view stays the core's. */
  clearCache() {
    return this.cache ? this.cache.clearAll() : Promise.resolve();
  }

  /** The session's core, null while it is rebuilt or once closed. */
  get core() {
    return this.loop.core;
  }

  /** How many times the core was discarded and rebuilt (a trap or a core_broken error). */
  get rebuilds() {
    return this.loop.rebuilds;
  }

  /** Whether close() was called. */
  get closed() {
    return this.loop.closed;
  }

  /**
   * Resolves with the first view (the current one included) for which
   * predicate is true; rejects with a 'timeout' AgentsyncError after
   * timeoutMs (default 30 s, 0 = never), or a 'closed' one when the
   * session closes.
   * @returns {Promise<object>} the view
   */
  waitFor(predicate, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    if (this.closed) return Promise.reject(new AgentsyncError('closed', 'waitFor: session closed'));
    return waitForView(this, predicate, timeoutMs, ({ status }) => status === 'closed');
  }


  /**
   * Warms this session's WebAssembly core for a long answer, in
   * macrotasks (or whatever `pause` awaits between them), while the app is
   * idle: a synthetic answer streams through a scratch client of the
   * core's instance (Core.warm). A page's first long answer otherwise pays
   * for the module's baseline code, its memory's growth and its
   * collector's first cycles in its own tasks. Resolves when done, at once
   * for an instance warmed before (or a closed session).
   * @param {{bytes?: number, pause?: () => Promise<void>}} [opts]
   */
  async warm(opts) {
    const core = this.core;
    if (this.closed || !core || core.broken) return;
    try {
      await core.warm(opts);
    } catch (err) {
      // A trap broke the instance this session uses too: start over.
      if (core.broken && this.core === core && !this.closed) this.loop.rebuild(err);
      else if (!core.broken) throw err;
    }
  }

  /**
   * Calls listener with the view now and after every change, coalesced
   * (per microtask, or per animation frame with `schedule: 'frame'`).
   * Unchanged messages keep their object identity between views.
   * @returns {() => void} unsubscribe
   */
  subscribe(listener) {
    this.listeners.add(listener);
    safeCall(listener, this.view, this);
    return () => this.listeners.delete(listener);
  }

  /**
   * Listens to 'status' ({status, reason}), 'error' (AgentsyncError),
   * 'rebuild' ({reason}), 'change' ({reset, messages: [{message_id,
   * message, parts: [{index, part, appended?}]}]}) or 'alternatives'
   * ({sequence, count, index}: position sequence of this session's path
   * now has count alternatives and the path takes the index-th; a signal,
   * docs/protocol.md §4.6) or 'presence' ([{principal, connections,
   * typing}]: who follows the session now, also in session.presence)
   * events.
   * @returns {() => void} off
   */
  on(type, fn) {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Reads one page straight from the server (not through the core). */
  async messages(params = {}) {
    const bytes = await this.http.msgpack(sessionPath(this.sessionId, `/messages${pageQuery(params)}`));
    return decode(bytes);
  }

  /**
   * Loads older pages into the view until it holds the message at
   * sequence (or the first visible one after it): opening a session at a
   * search hit. Resolves with that message, or null when the path has
   * none at or after it; rejects as loadOlder does, or with 'timeout'.
   * @param {number} sequence
   * @param {{timeoutMs?: number}} [opts]
   */
  async reveal(sequence, { timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
    const deadline = Date.now() + timeoutMs;
    const view = await this.waitFor((v) => v.status === 'live', { timeoutMs });
    for (let v = view; ; v = this.view) {
      const first = v.messages[0];
      if (!v.has_more_older || (first && first.sequence <= sequence)) {
        return v.messages.find((m) => m.sequence >= sequence) ?? null;
      }
      if (timeoutMs > 0 && Date.now() > deadline) {
        throw new AgentsyncError('timeout', `reveal: message ${sequence} not loaded after ${timeoutMs} ms`);
      }
      await this.loadOlder();
    }
  }

  /**
   * Loads the next older page into the view; resolves once it is applied.
   * Rejects if the page fails, and with code core_broken if the core is
   * being rebuilt (or was, before the page came), closed once closed.
   */
  loadOlder() {
    return this.loop.request({ type: 'load_older' });
  }

  /** Switches include_internal; the core re-reads the snapshot. Rejects as loadOlder does. */
  setIncludeInternal(on) {
    this.includeInternal = !!on;
    return this.loop.request({ type: 'set_include_internal', include_internal: this.includeInternal });
  }

  /** The view digest (hex SHA-256 of its canonical encoding), equal on every host. */
  digest() {
    const core = this.loop.core;
    if (!core) throw new AgentsyncError('closed', 'no core: the session is closed or rebuilding');
    return core.digest();
  }

  /**
   * Posts a user message: a string becomes one text part. Every attempt
   * carries the same Idempotency-Key (opts.idempotencyKey, or a new one per
   * call), so a retry after a lost answer gets the message the first
   * attempt committed instead of posting it twice. A network failure, a 503
   * or a 429 is retried up to opts.retries times (default 3), after the
   * answer's Retry-After (over 30 s: thrown at once) or a backoff; any
   * other error is thrown at once.
   */
  send(parts, opts = {}) {
    const body = { parts: typeof parts === 'string' ? [{ type: 'text', text: parts }] : parts };
    if (opts.visibility) body.visibility = opts.visibility;
    if (opts.delivery !== undefined) {
      if (!DELIVERIES.has(opts.delivery)) return Promise.reject(new AgentsyncError('bad_request', `send: delivery must be steer, queue or interrupt, not ${opts.delivery}`));
      body.delivery = opts.delivery;
    }
    if (this.cache?.outboxOn) return this.cache.send(body, opts);
    return postIdempotent(this.http, sessionPath(this.sessionId, '/messages'), body, {
      key: opts.idempotencyKey ?? newIdempotencyKey(),
      retries: opts.retries ?? 3,
      wait: (ms) => this._pause(ms),
      what: 'send',
    });
  }

  /**
   * Answers a pending interaction, named by its id or given as its part:
   * {approved: bool} for an approval, {answer: string} for a question. A
   * 429 or 503 refusal is sent again after its Retry-After.
   */
  answer(interaction, response) {
    const id = typeof interaction === 'string' ? interaction : interaction?.interaction_id;
    if (typeof id !== 'string' || id === '') return Promise.reject(new AgentsyncError('bad_request', 'answer: an interaction id or part is needed'));
    return this.http.jsonRetried('POST', sessionPath(this.sessionId, `/interactions/${encodeURIComponent(id)}`), { response });
  }

  /** Runs a session action: ActionStop, ActionSetModel, ActionSetApprovalMode or ActionRetry; a 429 or 503 refusal is sent again. */
  action(type, value) {
    const body = { action_type: type };
    if (value !== undefined) body.value = value;
    return this.http.jsonRetried('POST', sessionPath(this.sessionId, '/actions'), body);
  }

  /**
   * Runs the last turn again after it ended with a recoverable error (the
   * retry action); rejects with conflict when there is nothing to retry.
   * Resolves with the internal message that restarts the turn.
   */
  retry() {
    return this.action(ActionRetry);
  }

  /** Sets the session's title; resolves with the session as the server now has it. */
  rename(title) {
    if (typeof title !== 'string') return Promise.reject(new AgentsyncError('bad_request', 'rename: title must be a string'));
    return this.http.json('PATCH', sessionPath(this.sessionId), { title });
  }

  /**
   * Deletes the session and its messages on the server, then closes this
   * Session (its last view stays readable).
   */
  async delete() {
    await this.http.json('DELETE', sessionPath(this.sessionId));
    await this.cache?.invalidate();
    this.close();
  }

  // ------------------------------------------------------------ conversation tree

  /**
   * Forks the session before beforeSequence (POST /v1/sessions/{id}/fork):
   * a new session of the same conversation whose first messages are this
   * one's, shared. opts.parts (a string is one text part) posts the fork's
   * first own message (an edit); opts.regenerate runs the turn of the
   * prefix's last user message again; neither is "fork from here".
   * Resolves with the new session's info (parent_session_id,
   * fork_sequence, root_session_id). This Session stays on its own path:
   * switchBranch() moves to the fork.
   */
  fork(beforeSequence, opts = {}) {
    const body = { before_sequence: beforeSequence };
    if (opts.parts !== undefined) body.parts = typeof opts.parts === 'string' ? [{ type: 'text', text: opts.parts }] : opts.parts;
    if (opts.regenerate) body.regenerate = true;
    return this.http.json('POST', sessionPath(this.sessionId, '/fork'), body);
  }

  /** Edits the user message at sequence, keeping the original: fork(sequence, {parts}). */
  edit(sequence, parts) {
    return this.fork(sequence, { parts });
  }

  /** Answers the reply at sequence again, keeping the original: fork(sequence, {regenerate: true}). */
  regenerate(sequence) {
    return this.fork(sequence, { regenerate: true });
  }

  /**
   * The alternatives at position sequence of this session's path (GET
   * /v1/sessions/{id}/branches): {sequence, index, items: [{session_id,
   * index, message?}]}, index being the one this path takes.
   */
  branches(sequence) {
    return this.http.json('GET', sessionPath(this.sessionId, `/branches?sequence=${encodeURIComponent(sequence)}`));
  }

  /**
   * The positions of this path with more than one alternative (GET
   * /v1/sessions/{id}/alternatives): [{sequence, count, index}], index
   * being the one this path takes; params.from/to bound the range.
   */
  async alternatives(params = {}) {
    const q = new URLSearchParams();
    if (params.from) q.set('from', String(params.from));
    if (params.to) q.set('to', String(params.to));
    const qs = q.toString();
    const list = await this.http.json('GET', sessionPath(this.sessionId, `/alternatives${qs ? `?${qs}` : ''}`));
    return list.items;
  }

  /**
   * Switches to another session of the conversation (a fork, or one that
   * branches() names): connects to it with this session's options and the
   * same module, which costs one page and a subscription, then closes this
   * one. Resolves with the new Session; if connecting fails this one is
   * left open.
   */
  async switchBranch(sessionId, opts = {}) {
    const next = await connect({ ...this.connectOpts, wasm: this.module ?? this.wasmSource ?? undefined, ...opts, sessionId });
    this.close();
    return next;
  }

  // Waits ms; resolves true if the session closed meanwhile (cut short).
  // Not a timer of the loop: a rebuild clears those, and a send outlives a
  // rebuild.
  _pause(ms) {
    if (this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (closed) => {
        clearTimeout(t);
        off();
        resolve(closed);
      };
      const t = setTimeout(() => done(this.closed), ms);
      const off = this.on('status', ({ status }) => {
        if (status === 'closed') done(true);
      });
    });
  }

  /** Test hook: the socket fails as a network failure would. */
  dropConnection() {
    return this.loop.dropConnection();
  }

  /**
   * Connects now if the session waits to reconnect (status backoff),
   * instead of at the end of its backoff; does nothing otherwise. The
   * session calls it itself when a browser goes back online. Returns
   * whether a reconnect was started.
   */
  reconnect() {
    return this.loop.reconnectNow();
  }

  /** Stops syncing for good. The view stays readable. */
  close() {
    this._close(null);
  }

  // Closes the session; cause, if given, is why it cannot go on (a session
  // that is gone, a refused token): waiters reject with it, not 'closed'.
  _close(cause) {
    if (this.closed) return;
    globalThis.removeEventListener?.('online', this._onOnline);
    if (cause) this.cause = cause; // before the core's status closed is heard
    this.loop.close();
    this._setStatus('closed', cause ? cause.message : 'closed by the host');
    this.loop.flush();
    for (const fn of this.waitLive ?? []) fn.reject(cause ?? new AgentsyncError('closed', 'session closed'));
    this.waitLive = null;
  }

  // ------------------------------------------------------------ lifecycle

  async _open() {
    // The cached window renders as soon as it is read, before the module loads.
    await this.cache?.restore();
    const module = await loadModule(this.wasmSource ?? (await defaultWasmSource()));
    this.module = module;
    if (this.closed) return;
    await this.http.currentToken(); // the socket's first URL needs it
    if (this.closed) return;
    globalThis.addEventListener?.('online', this._onOnline);
    await this.loop.open(module);
  }

  /**
   * For the loop: a connection or a page read failed with cause. A session
   * that is gone (not_found) or a token refused for good (unauthorized,
   * forbidden) ends the session at once ('error', then status closed);
   * any other cause is kept (Session.cause, the next status event) while
   * the core backs off, and a connect() still waiting rejects with it.
   * Returns whether the session ended.
   */
  _failed(cause) {
    if (this.closed) return true;
    if (TERMINAL_CODES.has(cause.code) && !cause.retryable) {
      if (cause.code === 'not_found') this.cache?.invalidate();
      this._emit('error', cause);
      this._close(cause);
      return true;
    }
    if (this.status === 'live') return false; // an older page failed while live: the core retries it
    this.cause = cause;
    if (cause.code !== 'unauthorized' && this.waitLive) {
      for (const w of this.waitLive) w.reject(cause);
      this.waitLive = null;
    }
    return false;
  }

  _log(...args) {
    if (this.log) this.log(...args);
  }

  _setStatus(status, reason) {
    if (!status || status === this.status) return;
    this.status = status;
    this.patcher.status = status;
    if (status === 'live') this.cause = null;
    this.cache?.status(status);
    this._schedule();
    this._emit('status', { status, reason: reason ?? '', cause: this.cause });
    if (status === 'live' && this.waitLive) {
      for (const w of this.waitLive) w.resolve();
      this.waitLive = null;
    }
  }

  _waitLive(timeoutMs) {
    if (this.status === 'live') return Promise.resolve();
    if (this.closed) return Promise.reject(new AgentsyncError('closed', 'session closed'));
    return new Promise((resolve, reject) => {
      let t = null;
      const w = {
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      };
      (this.waitLive ??= []).push(w);
      if (timeoutMs > 0) {
        t = setTimeout(() => w.reject(new AgentsyncError('timeout', `not live after ${timeoutMs} ms (status ${this.status})`)), timeoutMs);
      }
    });
  }

  // ------------------------------------------------------------ notifications

  // For the loop: the view changed, listeners are due.
  _schedule() {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.scheduler(this._notify);
  }

  // The scheduled flush (bound once in the constructor: a delta allocates
  // no closure): every change the flushes took, in order; then the
  // listeners, with the view (compared with what they last got: a read of
  // session.view in between may already have flushed).
  _notifyNow() {
    this.flushScheduled = false;
    this.loop.flush();
    for (const c of this.patcher.takeChanges()) this._emit('change', c);
    const v = this.cache ? this.cache.shown(this.patcher.view) : this.patcher.view;
    this.cache?.changed();
    if (v !== this.notifiedView && this.listeners.size > 0) {
      this.notifiedView = v;
      // A Set iterates what is added during the loop too, and skips what
      // is deleted: a listener may unsubscribe itself or another.
      for (const fn of this.listeners) safeCall(fn, v, this);
    }
  }

  // A signal from the subscription (§4.6): known ones become events,
  // unknown ones are ignored (a newer server may send more).
  _signal(text) {
    let s;
    try {
      s = JSON.parse(text);
    } catch {
      this._log('agentsync: a signal that is not JSON', text);
      return;
    }
    if (s?.signal === 'alternatives' && Number.isInteger(s.sequence) && Number.isInteger(s.count) && Number.isInteger(s.index)) {
      this._emit('alternatives', { sequence: s.sequence, count: s.count, index: s.index });
    } else if (s?.signal === 'presence' && Array.isArray(s.viewers)) {
      this.presence = s.viewers
        .filter((v) => typeof v?.principal === 'string')
        .map((v) => ({ principal: v.principal, connections: Number(v.connections) || 0, typing: v.typing === true }));
      this._emit('presence', this.presence);
    }
  }

  /**
   * Tells the session's other viewers that this principal is typing (or
   * stopped): POST /v1/sessions/{id}/typing. It lapses on the server a few
   * seconds after it was last said, so an app calls it again while the
   * user keeps typing (at most every couple of seconds is plenty).
   * @param {boolean} [typing]
   */
  async typing(typing = true) {
    await this.http.json('POST', sessionPath(this.sessionId, '/typing'), { typing: !!typing });
  }

  // Calls the handlers of an event type; an error nobody hears is logged.
  _emit(type, arg) {
    const set = this.handlers.get(type);
    if (set) for (const fn of set) safeCall(fn, arg, this);
    else if (type === 'error') this._log('agentsync error', arg);
  }
}

function safeCall(fn, arg, session) {
  try {
    fn(arg);
  } catch (err) {
    // A listener's bug must not break syncing; report it asynchronously.
    if (session.log) session.log('listener threw', err);
    else queueMicrotask(() => {
      throw err;
    });
  }
}

// The coalescing scheduler of view notifications.
function makeScheduler(kind = 'microtask') {
  if (typeof kind === 'function') return kind;
  if (kind === 'frame' && typeof globalThis.requestAnimationFrame === 'function') {
    return (fn) => globalThis.requestAnimationFrame(() => fn());
  }
  return (fn) => queueMicrotask(fn);
}
