// agentsync for browsers and Node: a thin host around the WebAssembly sync
// core. The core decides everything (what to subscribe, which page to read,
// when to back off, what changed); this file only carries out its commands
// with web APIs (WebSocket, fetch, setTimeout) and keeps a render-friendly
// copy of the view that is refreshed message by message, never decoded whole
// per delta.

import { AgentsyncError, COMPACT, CORE_BROKEN, Core, defaultWasmSource, loadModule } from './core.js';
import { RENDER_ONLY } from './changes.js';
import { codeForStatus } from './errcodes.js';
import { decode } from './msgpack.js';
import { EMPTY_VIEW } from './empty-view.js';

export { AgentsyncError, COMPACT, CORE_BROKEN, Core, loadModule } from './core.js';
export { ERROR_CODES, codeForStatus } from './errcodes.js';
export { decode, encode } from './msgpack.js';

const DEFAULT_TIMEOUT_MS = 30000;
// The length at which the tail of a streamed text joins its head (_appendToPart).
const TAIL_CHUNK = 256;

/**
 * Opens a session view and resolves once it is live (snapshot applied,
 * stream continuous), unless `wait: false`.
 * @param {import('./index.d.ts').ConnectOptions} opts
 * @returns {Promise<Session>}
 */
export async function connect(opts) {
  const session = new Session(opts);
  // Attached before the session starts, so no status change is missed.
  if (opts.onStatus) session.on('status', opts.onStatus);
  await session._open();
  if (opts.wait === false) return session;
  try {
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
 * Lists the server's sessions (GET /v1/sessions), newest first.
 * @param {string} url the server's base URL
 * @param {{token?: string, fetch?: typeof fetch, limit?: number}} [opts]
 */
export async function listSessions(url, opts = {}) {
  const http = new Http(url, opts.token, opts.fetch);
  const list = await http.json('GET', `/v1/sessions${pageQuery({ limit: opts.limit })}`);
  return list.items;
}

// Http is the small REST part of the API, shared by Session and createSession.
class Http {
  constructor(url, token, fetchImpl) {
    this.base = String(url).replace(/\/+$/, '');
    this.token = token;
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
  }

  headers(extra) {
    const h = { ...extra };
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    return h;
  }

  async json(method, path, body) {
    const res = await this.exchange(method, path, body);
    if (!res.ok) throw httpError(res.status, res.text);
    return res.text ? JSON.parse(res.text) : null;
  }

  // json(), sent again (at most `retries` times) while the server refuses
  // it for now: 429 or 503 (RETRIED_STATUSES), after retryDelay. For an
  // answer or an action, which must not be sent twice: a network failure
  // (the request may have been served) is thrown, never retried.
  async jsonRetried(method, path, body, retries = 3) {
    for (let attempt = 0; ; attempt++) {
      const res = await this.exchange(method, path, body);
      if (res.ok) return res.text ? JSON.parse(res.text) : null;
      const delay = retryDelay(res, attempt);
      if (!RETRIED_STATUSES.has(res.status) || attempt >= retries || delay === Infinity) throw httpError(res.status, res.text);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  // One JSON request whose error answer is returned, not thrown: send()
  // reads its status and Retry-After to decide whether to try again.
  async exchange(method, path, body, extraHeaders) {
    const init = { method, headers: this.headers({ Accept: 'application/json', ...extraHeaders }) };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await this.fetch(this.base + path, init);
    return { ok: res.ok, status: res.status, headers: res.headers, text: await res.text() };
  }

  // GET with Accept: application/msgpack; returns the raw body bytes.
  async msgpack(path) {
    const res = await this.fetch(this.base + path, { headers: this.headers({ Accept: 'application/msgpack' }) });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (!res.ok) {
      let text;
      try {
        const v = decode(bytes);
        text = JSON.stringify(v);
      } catch {
        text = new TextDecoder().decode(bytes);
      }
      throw httpError(res.status, text);
    }
    return bytes;
  }
}

function httpError(status, text) {
  let code = codeForStatus(status); // an answer without a typed body (a proxy's, say)
  let message = text;
  try {
    const v = JSON.parse(text);
    if (v && typeof v.code === 'string') {
      code = v.code;
      message = v.message ?? '';
    }
  } catch {
    // not JSON: keep the text
  }
  return new AgentsyncError(code, `HTTP ${status}: ${message}`, { status });
}

// The answers send() tries again: 429 rate_limited and 503 closed (the
// server is draining, or a forwarded post timed out: that one may have
// landed, which the Idempotency-Key makes safe).
const RETRIED_STATUSES = new Set([429, 503]);
const MAX_RETRY_DELAY_MS = 30000;

// How long send() waits before its next attempt: the answer's Retry-After
// in whole seconds (as the server sends it; an HTTP date, which it never
// sends, gets the backoff), else 250 ms doubled per attempt (at most
// MAX_RETRY_DELAY_MS). A Retry-After past MAX_RETRY_DELAY_MS is Infinity:
// the caller hears the error at once rather than waiting on, unseen.
function retryDelay(res, attempt) {
  const after = res?.headers.get('Retry-After');
  if (after && /^\d+$/.test(after.trim())) {
    const ms = Number(after) * 1000;
    return ms > MAX_RETRY_DELAY_MS ? Infinity : ms;
  }
  return Math.min(250 * 2 ** attempt, MAX_RETRY_DELAY_MS);
}

// A key per send() call. randomUUID exists only in secure contexts (https,
// localhost); getRandomValues everywhere, a page on a LAN address included.
function newIdempotencyKey() {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  return Array.from(c.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

function pageQuery({ limit, before_sequence, include_internal } = {}) {
  const q = new URLSearchParams();
  if (limit !== undefined && limit !== null) q.set('limit', String(limit));
  if (before_sequence) q.set('before_sequence', String(before_sequence));
  if (include_internal !== undefined) q.set('include_internal', include_internal ? 'true' : 'false');
  const s = q.toString();
  return s ? `?${s}` : '';
}

// A jitter in 0..1000 for the core's backoff: the core has no randomness.
function jitter() {
  return Math.floor(Math.random() * 1001);
}

/** One synced session. Build it with connect() or createSession(). */
export class Session {
  constructor(opts) {
    if (!opts || !opts.url) throw new AgentsyncError('bad_request', 'connect needs a url');
    if (!opts.sessionId) throw new AgentsyncError('bad_request', 'connect needs a sessionId');
    this.sessionId = opts.sessionId;
    this.http = new Http(opts.url, opts.token, opts.fetch);
    this.wsBase = this.http.base.replace(/^http/i, 'ws');
    this.token = opts.token;
    this.pageLimit = opts.pageLimit ?? 0;
    this.includeInternal = !!opts.includeInternal;
    this.wasmSource = opts.wasm ?? null;
    this.WebSocket = opts.WebSocket ?? globalThis.WebSocket;
    if (!this.WebSocket) {
      throw new AgentsyncError('bad_request', 'no WebSocket implementation: pass opts.WebSocket (Node 20 needs --experimental-websocket)');
    }
    this.scheduler = makeScheduler(opts.schedule);
    this.log = opts.log ?? null;

    this.core = null;
    this.module = null;
    this.gen = 0; // bumped on rebuild and close: late callbacks of an older generation are dropped
    this.ws = null;
    this.timers = new Set();
    this.pageWaiters = new Map(); // request_id -> {resolve, reject}
    this.queue = [];
    this.replies = new Map(); // queued event -> callback for its Output (_request)
    this.handling = false;
    this.closed = false;
    this.rebuilding = null;
    /** How many times the core was discarded and rebuilt (a trap or a core_broken error). */
    this.rebuilds = 0;

    this.status = 'idle';
    this.listeners = new Set();
    this.handlers = new Map();
    this._view = { ...EMPTY_VIEW, session_id: this.sessionId };
    this.index = new Map(); // message_id -> position in _view.messages
    this.bases = new Map(); // message_id -> the objects appends copy (_appendToPart)
    this.lastBase = null; // the entry of bases the last append used
    this.dirty = true; // the core handled events since the view was patched
    this.recovering = false; // a rebuilt core is not live yet: keep the old messages
    this.pendingChanges = []; // change events not yet emitted, oldest first
    this._notify = this._notifyNow.bind(this);
    this.flushScheduled = false;
  }

  // ------------------------------------------------------------ public API

  /** The current view: messages oldest first, streaming projections merged in. */
  get view() {
    this._flush();
    return this._view;
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
    return new Promise((resolve, reject) => {
      let settled = false;
      const cleanups = [];
      const settle = (fn, arg) => {
        if (settled) return;
        settled = true;
        for (const cleanup of cleanups) cleanup();
        fn(arg);
      };
      if (timeoutMs > 0) {
        const t = setTimeout(() => settle(reject, new AgentsyncError('timeout', `waitFor: no matching view after ${timeoutMs} ms`)), timeoutMs);
        cleanups.push(() => clearTimeout(t));
      }
      cleanups.push(this.on('status', ({ status }) => {
        if (status === 'closed') settle(reject, new AgentsyncError('closed', 'waitFor: session closed'));
      }));
      // subscribe() calls the listener at once, so the current view counts.
      const unsubscribe = this.subscribe((view) => {
        if (settled) return;
        try {
          if (predicate(view)) settle(resolve, view);
        } catch (err) {
          settle(reject, err);
        }
      });
      if (settled) unsubscribe();
      else cleanups.push(unsubscribe);
    });
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
      if (core.broken && this.core === core && !this.closed) this._rebuild(err);
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
   * 'rebuild' ({reason}) or 'change' ({reset, messages: [{message_id,
   * message, parts: [{index, part, appended?}]}]}) events.
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
    const bytes = await this.http.msgpack(`/v1/sessions/${encodeURIComponent(this.sessionId)}/messages${pageQuery(params)}`);
    return decode(bytes);
  }

  /** Loads the next older page into the view; resolves once it is applied. */
  loadOlder() {
    return this._request({ type: 'load_older' });
  }

  /** Switches include_internal; the core re-reads the snapshot. */
  setIncludeInternal(on) {
    this.includeInternal = !!on;
    return this._request({ type: 'set_include_internal', include_internal: this.includeInternal });
  }

  /** The view digest (hex SHA-256 of its canonical encoding), equal on every host. */
  digest() {
    if (!this.core) throw new AgentsyncError('closed', 'no core: the session is closed or rebuilding');
    return this.core.digest();
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
  async send(parts, opts = {}) {
    const body = { parts: typeof parts === 'string' ? [{ type: 'text', text: parts }] : parts };
    if (opts.visibility) body.visibility = opts.visibility;
    const key = opts.idempotencyKey ?? newIdempotencyKey();
    // An empty key would post without one (and a retry could post twice).
    if (typeof key !== 'string' || key === '') throw new AgentsyncError('bad_request', 'send: idempotencyKey must be a non-empty string');
    const retries = opts.retries ?? 3;
    if (!Number.isInteger(retries) || retries < 0) throw new AgentsyncError('bad_request', 'send: retries must be an integer >= 0');
    const path = `/v1/sessions/${encodeURIComponent(this.sessionId)}/messages`;
    for (let attempt = 0; ; attempt++) {
      let res = null;
      let failure;
      try {
        res = await this.http.exchange('POST', path, body, { 'Idempotency-Key': key });
      } catch (err) {
        // fetch rejected (or the answer was cut off): the post may or may
        // not have been committed, which is what the key is for.
        failure = err;
      }
      if (res?.ok) return JSON.parse(res.text);
      if (res) failure = httpError(res.status, res.text);
      const delay = retryDelay(res, attempt);
      if ((res && !RETRIED_STATUSES.has(res.status)) || attempt >= retries || delay === Infinity) throw failure;
      await this._pause(delay);
      if (this.closed) throw new AgentsyncError('closed', 'send: session closed');
    }
  }

  /** Answers a pending interaction: {approved: bool} or {answer: string}. A 429 or 503 refusal is sent again after its Retry-After. */
  answer(interactionId, response) {
    const path = `/v1/sessions/${encodeURIComponent(this.sessionId)}/interactions/${encodeURIComponent(interactionId)}`;
    return this.http.jsonRetried('POST', path, { response });
  }

  /** Runs a session action: 'stop', 'set_model' or 'set_approval_mode'. */
  action(type, value) {
    const body = { action_type: type };
    if (value !== undefined) body.value = value;
    return this.http.jsonRetried('POST', `/v1/sessions/${encodeURIComponent(this.sessionId)}/actions`, body);
  }

  // Waits ms, cut short if the session closes meanwhile. Not a _setTimer:
  // a rebuild clears those, and a send outlives a rebuild.
  _pause(ms) {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        off();
        resolve();
      };
      const t = setTimeout(done, ms);
      const off = this.on('status', ({ status }) => {
        if (status === 'closed') done();
      });
    });
  }

  /** Test hook: the socket fails as a network failure would. */
  dropConnection() {
    const ws = this.ws;
    if (!ws) return false;
    this._detach(ws);
    try {
      ws.close();
    } catch {
      // already closing
    }
    this._dispatch({ type: 'connection_lost', error: 'connection dropped', jitter: jitter() });
    return true;
  }

  /** Stops syncing for good. The view stays readable. */
  close() {
    if (this.closed) return;
    if (this.core && !this.core.broken) this._dispatch({ type: 'close' });
    this.closed = true;
    this._teardown();
    this.core?.free();
    this.core = null;
    this._setStatus('closed', 'closed by the host');
    this._flush();
    for (const fn of this.waitLive ?? []) fn.reject(new AgentsyncError('closed', 'session closed'));
  }

  // ------------------------------------------------------------ core loop

  async _open() {
    this.module = await loadModule(this.wasmSource ?? (await defaultWasmSource()));
    this.core = await Core.load(this.module, this._coreOpts());
    this._start();
  }

  _coreOpts() {
    return { stderr: (line) => this._log('wasm', line), stdout: (line) => this._log('wasm', line) };
  }

  _log(...args) {
    if (this.log) this.log(...args);
  }

  _start() {
    const ev = { type: 'start', session_id: this.sessionId, include_internal: this.includeInternal };
    if (this.pageLimit) ev.page_limit = this.pageLimit;
    this.dirty = true;
    this._dispatch(ev);
  }

  // Events are handled one at a time, in order: an event dispatched while
  // another is handled (by a command carried out, or a listener such as a
  // 'status' one) queues behind it. reply, if given, gets the event's
  // Output once it is handled (undefined if the session closed first).
  _dispatch(ev, reply) {
    if (this.closed || !this.core) {
      reply?.(undefined);
      return undefined;
    }
    if (reply) this.replies.set(ev, reply);
    if (this.handling) {
      this.queue.push(ev);
      return undefined;
    }
    this.handling = true;
    let last;
    try {
      // The event itself is not queued (nothing else is: the queue only
      // fills while an event is handled), so a delta costs no queue trip.
      last = this._handleOne(ev);
      this._reply(ev, last);
      while (this.queue.length > 0) {
        const next = this.queue.shift();
        last = this._handleOne(next);
        this._reply(next, last);
      }
    } finally {
      this.handling = false;
    }
    return last;
  }

  _reply(ev, out) {
    if (this.replies.size === 0) return;
    const reply = this.replies.get(ev);
    if (!reply) return;
    this.replies.delete(ev);
    reply(out);
  }

  _handleOne(ev) {
    const core = this.core;
    if (!core || this.closed) return undefined;
    let out;
    let changes = null;
    try {
      if (ev instanceof Uint8Array && !this.flushScheduled) {
        // One call handles the frames and takes what they changed (ABI v3);
        // a delta to the part the last one went to comes back compact (v4).
        const res = core.handleCompact(ev);
        if (res === COMPACT) {
          if (this._applyCompact(core)) this._schedule();
          return RENDER_ONLY;
        }
        ({ out, changes } = res);
      } else if (ev instanceof Uint8Array) {
        // A flush is due already (a burst of messages before it): it takes
        // the changes of the whole burst once.
        out = core.handleFrames(ev);
      } else {
        out = core.handle(ev);
      }
    } catch (err) {
      // Only a broken core (a trap, core_broken) is rebuilt; an event the
      // host could not even encode is reported and changes nothing.
      if (core.broken) {
        this._rebuild(err);
        return undefined;
      }
      const e = err instanceof AgentsyncError ? err : new AgentsyncError('bad_request', String(err?.message ?? err));
      this._emit('error', e);
      if (!(ev instanceof Uint8Array) && (ev.type === 'page' || ev.type === 'page_failed')) this._settlePage(ev, { code: e.code, message: e.detail });
      return undefined;
    }
    if (out.error) {
      const err = new AgentsyncError(out.error.code, out.error.message ?? '');
      // core.broken is set by core_broken alone: a server's error frame
      // (code internal, say) is reported, and its resync commands run.
      if (core.broken) {
        this._rebuild(err);
        return undefined;
      }
      this._emit('error', err);
    }
    if (changes === null) this.dirty = true; // taken at the next flush
    this._run(out.commands);
    if (changes !== null) {
      // Taken with the frames: everything since the last take, so the view
      // is patched now, and the listeners hear of it once per flush.
      this.dirty = false;
      if (this._apply(changes)) this._schedule();
    }
    if (!(ev instanceof Uint8Array) && (ev.type === 'page' || ev.type === 'page_failed')) this._settlePage(ev, out.error);
    return out;
  }

  _run(commands) {
    for (const cmd of commands) {
      switch (cmd.type) {
        case 'open_subscription':
          this._openSocket(cmd.session_id || this.sessionId);
          break;
        case 'close_subscription':
          this._closeSocket();
          break;
        case 'fetch_page':
          this._fetchPage(cmd);
          break;
        case 'set_timer':
          this._setTimer(cmd.timer_id, cmd.delay_ms ?? 0);
          break;
        case 'render':
          // What changed is taken from the core once per flush (core.changes()).
          this._schedule();
          break;
        case 'status':
          this._setStatus(cmd.status, cmd.reason);
          break;
        default:
          this._log('unknown command', cmd.type);
      }
    }
  }

  _openSocket(sessionId) {
    this._closeSocket();
    const gen = this.gen;
    // kept=1: the core takes texts without the beginning it was sent (§4.5).
    let url = `${this.wsBase}/v1/sessions/${encodeURIComponent(sessionId)}/subscribe?kept=1`;
    if (this.token) url += `&token=${encodeURIComponent(this.token)}`;
    let ws;
    try {
      ws = new this.WebSocket(url);
    } catch (err) {
      queueMicrotask(() => this._lost(gen, null, `open failed: ${err?.message ?? err}`));
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    const current = () => this.gen === gen && this.ws === ws;
    ws.onopen = () => {
      if (current()) this._dispatch({ type: 'subscription_opened' });
    };
    // The handlers are one-line closures over this socket; the work is in
    // methods shared by every session, so the code V8 optimizes for it is
    // not specialised to one session (with the body inline, --trace-deopt
    // showed the hot path deoptimized when a session was collected).
    ws.onmessage = (e) => this._onMessage(gen, ws, e.data);
    ws.onerror = () => this._lost(gen, ws, 'websocket error');
    ws.onclose = (e) => this._lost(gen, ws, `websocket closed (${e?.code ?? ''}${e?.reason ? ` ${e.reason}` : ''})`);
  }

  _onMessage(gen, ws, d) {
    if (this.gen !== gen || this.ws !== ws) return;
    // The protocol sends binary messages only; anything else is handed to
    // the core as bytes so that it reports it as malformed and resyncs.
    const bytes = d instanceof ArrayBuffer ? new Uint8Array(d) : d instanceof Uint8Array ? d : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : new TextEncoder().encode(String(d));
    this._dispatch(bytes);
  }

  _lost(gen, ws, reason) {
    if (this.gen !== gen || (ws && this.ws !== ws)) return;
    if (ws) this._detach(ws);
    this._dispatch({ type: 'connection_lost', error: reason, jitter: jitter() });
  }

  _detach(ws) {
    ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
    if (this.ws === ws) this.ws = null;
  }

  _closeSocket() {
    const ws = this.ws;
    if (!ws) return;
    this._detach(ws);
    try {
      ws.close(1000);
    } catch {
      // already closed
    }
  }

  async _fetchPage(cmd) {
    const gen = this.gen;
    const id = cmd.request_id;
    const params = { limit: cmd.limit || undefined, before_sequence: cmd.before_sequence, include_internal: !!cmd.include_internal };
    const path = `/v1/sessions/${encodeURIComponent(cmd.session_id || this.sessionId)}/messages${pageQuery(params)}`;
    let ev;
    try {
      const data = await this.http.msgpack(path);
      ev = { type: 'page', request_id: id, data };
    } catch (err) {
      ev = { type: 'page_failed', request_id: id, error: String(err?.message ?? err) };
    }
    if (this.gen === gen) this._dispatch(ev);
  }

  _setTimer(timerId, delay) {
    const gen = this.gen;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.gen === gen) this._dispatch({ type: 'timer_fired', timer_id: timerId });
    }, delay);
    this.timers.add(t);
  }

  _setStatus(status, reason) {
    if (!status || status === this.status) return;
    this.status = status;
    this._schedule();
    this._emit('status', { status, reason: reason ?? '' });
    if (status === 'live' && this.waitLive) {
      for (const w of this.waitLive) w.resolve();
      this.waitLive = null;
    }
  }

  _waitLive(timeoutMs) {
    if (this.status === 'live') return Promise.resolve();
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

  // Runs an event and, if the core asked for a page, waits for its answer.
  // The Output comes by reply: an event queued behind another (a call from a
  // listener) is answered when it is handled, not taken for "nothing to do".
  _request(ev) {
    return new Promise((resolve, reject) => {
      this._dispatch(ev, (out) => {
        if (out?.error) {
          reject(new AgentsyncError(out.error.code, out.error.message ?? ''));
          return;
        }
        const ids = (out?.commands ?? []).filter((c) => c.type === 'fetch_page').map((c) => c.request_id);
        const pages = ids.map((id) => new Promise((res, rej) => this.pageWaiters.set(id, { resolve: res, reject: rej })));
        Promise.all(pages).then(() => resolve(), reject);
      });
    });
  }

  _settlePage(ev, error) {
    const w = this.pageWaiters.get(ev.request_id);
    if (!w) return;
    this.pageWaiters.delete(ev.request_id);
    if (ev.type === 'page_failed') w.reject(new AgentsyncError('internal', ev.error ?? 'page failed'));
    else if (error) w.reject(new AgentsyncError(error.code, error.message ?? ''));
    else w.resolve();
  }

  _teardown() {
    this.gen++;
    this._closeSocket();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    // Queued events are dropped; whoever waits for one is let go.
    for (const ev of this.queue.splice(0)) this._reply(ev, undefined);
    // Waiters of an abandoned generation will never get their page: let
    // them go rather than hang (the rebuilt core reads its own pages).
    for (const w of this.pageWaiters.values()) w.resolve();
    this.pageWaiters.clear();
  }

  // A trap or a core_broken error: the instance is undefined. Throw it away,
  // start a fresh one and re-read the snapshot (the server is the
  // authority, so nothing is lost to the caller). The old view stays on
  // screen until the new one replaces it.
  _rebuild(reason) {
    if (this.closed || this.rebuilding) return;
    this.rebuilds++;
    this._log('rebuilding core after', reason);
    this._emit('rebuild', { reason });
    this.recovering = true;
    this._teardown();
    this.core = null;
    this.rebuilding = (async () => {
      let delay = 100;
      while (!this.closed) {
        try {
          this.core = await Core.load(this.module, this._coreOpts());
          break;
        } catch (err) {
          this._emit('error', err instanceof AgentsyncError ? err : new AgentsyncError('internal', String(err)));
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 30000);
        }
      }
      this.rebuilding = null;
      if (!this.closed) this._start();
    })();
  }

  // ------------------------------------------------------------ view cache

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
    this._flush();
    if (this.pendingChanges.length > 0) {
      const changes = this.pendingChanges;
      this.pendingChanges = [];
      for (const c of changes) this._emit('change', c);
    }
    const v = this._view;
    if (v !== this.notifiedView && this.listeners.size > 0) {
      this.notifiedView = v;
      // A Set iterates what is added during the loop too, and skips what
      // is deleted: a listener may unsubscribe itself or another.
      for (const fn of this.listeners) safeCall(fn, v, this);
    }
  }

  // Brings _view up to date with what the core says changed since the last
  // take (core.changes()), for the events other than frames (whose changes
  // come with them). Returns whether anything changed.
  _flush() {
    const core = this.core;
    const statusChanged = this._view.status !== this.status;
    if (!this.dirty && !statusChanged) return false;
    if (!core || core.broken) {
      if (statusChanged) this._view = { ...this._view, status: this.status };
      return statusChanged;
    }
    let ch;
    try {
      ch = core.changes();
    } catch (err) {
      if (core.broken) this._rebuild(err);
      else this._emit('error', err);
      return false;
    } finally {
      this.dirty = false;
    }
    return this._apply(ch);
  }

  // Patches _view with one take of changes (ABI v2, protocol §7.4): text
  // that grew is appended to the held part, so a delta costs its own size
  // whatever the message's length. A changed message (and part) is a new
  // object; every other keeps its identity. `ch` is a Changes, or the
  // appends form of core.handleChanges. Returns whether anything changed.
  _apply(ch) {
    const statusChanged = this._view.status !== this.status;
    if (this.recovering) {
      // A rebuilt core starts empty: the old messages stay until it is
      // live, when its snapshot arrives as a reset.
      if (ch.status !== 'live') {
        if (statusChanged) this._view = { ...this._view, status: this.status };
        return statusChanged;
      }
      this.recovering = false;
    }
    const old = this._view;
    const appends = ch.appends;
    const changed = appends ? appends.length > 0 : ch.reset || ch.messages.length > 0;
    if (!changed && old.status === this.status && old.total === (ch.total ?? 0) &&
        old.has_more_older === !!ch.has_more_older && old.loading_older === !!ch.loading_older &&
        old.include_internal === !!ch.include_internal && (old.next_before_sequence ?? 0) === (ch.next_before_sequence ?? 0)) {
      return false; // nothing a reader can see changed: the view keeps its identity
    }
    if (appends && changed) return this._applyAppends(ch, old.messages);
    let messages = old.messages;
    const change = { reset: !!ch.reset, messages: [] };
    if (appends) {
      // nothing appended: only the scalars below changed
    } else if (ch.reset) {
      this.bases.clear();
      this.lastBase = null;
      messages = ch.messages.map((mc) => mc.message);
      this.index = new Map(messages.map((m, i) => [m.message_id, i]));
      for (const m of messages) change.messages.push(wholeChange(m));
    } else if (ch.messages.length > 0) {
      messages = messages.slice();
      for (const mc of ch.messages) {
        const at = this.index.get(mc.message_id);
        // Its appends start from the new object: the old base (and text)
        // is let go.
        this.bases.delete(mc.message_id);
        this.lastBase = null;
        if (mc.message) {
          if (mc.kept_texts && !keepTexts(at === undefined ? null : messages[at], mc)) return this._unknownMessage(mc.message_id);
          if (at === undefined) {
            insertBySequence(messages, mc.message);
            this.index = new Map(messages.map((m, i) => [m.message_id, i])); // positions after it shifted
          } else {
            messages[at] = mc.message;
          }
          change.messages.push(wholeChange(mc.message));
        } else if (at !== undefined) {
          const patched = patchMessage(messages[at], mc);
          if (patched === null) return this._unknownMessage(mc.message_id);
          const { message, parts } = patched;
          messages[at] = message;
          change.messages.push({ message_id: mc.message_id, message, parts });
        } else {
          return this._unknownMessage(mc.message_id);
        }
      }
    }
    this._setView(messages, ch);
    if (change.reset || change.messages.length > 0) this._pushChange(change);
    return true;
  }

  // _apply for the appends form, the take of almost every delta: text
  // appended to held parts, and nothing else built than what a reader gets
  // (the change event only for someone to hear it).
  _applyAppends(ch, held) {
    const appends = ch.appends;
    const messages = held.slice();
    const told = this.handlers.get('change')?.size > 0;
    let change = null;
    for (let k = 0; k < appends.length; k += 3) {
      const at = this.index.get(appends[k]);
      if (at === undefined) return this._unknownMessage(appends[k]);
      const index = appends[k + 1];
      const appended = appends[k + 2];
      const message = this._appendToPart(messages[at], index, appended);
      messages[at] = message;
      if (told) {
        change ??= { reset: false, messages: [] };
        change.messages.push({ message_id: message.message_id, message, parts: [{ index, part: message.parts[index], appended }] });
      }
    }
    this._setView(messages, ch);
    if (change !== null) this._pushChange(change);
    return true;
  }

  // _apply for a compact answer (core.handleCompact): text appended to one
  // part of the message the last take appended to; the scalars as they were.
  _applyCompact(core) {
    const id = core.compactId;
    const at = this.index.get(id);
    if (at === undefined) return this._unknownMessage(id);
    const old = this._view;
    const messages = old.messages.slice();
    const index = core.compactIndex;
    const appended = core.compactText;
    const message = this._appendToPart(messages[at], index, appended);
    messages[at] = message;
    const view = {
      session_id: this.sessionId,
      status: this.status,
      messages,
      total: old.total,
      has_more_older: old.has_more_older,
      loading_older: old.loading_older,
      include_internal: old.include_internal,
    };
    if (old.next_before_sequence) view.next_before_sequence = old.next_before_sequence;
    this._view = view;
    if (this.handlers.get('change')?.size > 0) {
      this._pushChange({ reset: false, messages: [{ message_id: id, message, parts: [{ index, part: message.parts[index], appended }] }] });
    }
    return true;
  }

  // A new view: these messages and the scalars of a take of changes.
  _setView(messages, ch) {
    const view = {
      session_id: this.sessionId,
      status: this.status,
      messages,
      total: ch.total ?? 0,
      has_more_older: !!ch.has_more_older,
      loading_older: !!ch.loading_older,
      include_internal: !!ch.include_internal,
    };
    if (ch.next_before_sequence) view.next_before_sequence = ch.next_before_sequence;
    this._view = view;
  }

  // held with text appended to part i: a new message, parts array and
  // part; the other parts are shared with the previous view. Two costs of
  // the obvious `{...held, parts}` are avoided (each about as dear as the
  // rest of a delta):
  //   - The copies are spread from the objects a run of appends started
  //     from (bases), not from the previous delta's copies: V8 spreads one
  //     object over and over fast, a copy of a copy of a copy several times
  //     slower. Appends change nothing but text, so a base's other fields
  //     are the held ones.
  //   - The text is head + tail, the tail a flat string of the last few
  //     deltas rebuilt on each: `text + delta` would keep two small strings
  //     alive per delta (the delta and a cons string), and V8's young
  //     collector pays for every object that survives it. The head takes
  //     the tail once it is TAIL_CHUNK long.
  _appendToPart(held, i, text) {
    let b = this.lastBase;
    if (b === null || b.message !== held) {
      b = this.bases.get(held.message_id);
      if (b === undefined || b.message !== held) {
        b = { message: held, base: held, parts: [] };
        this.bases.set(held.message_id, b);
      }
      this.lastBase = b;
    }
    const parts = held.parts.slice();
    const cur = parts[i];
    let s = b.parts[i];
    if (s === undefined || s.made !== cur) s = b.parts[i] = { base: null, made: cur, head: cur.text ?? '', tail: '' };
    const tail = s.tail === '' ? text : [s.tail, text].join(''); // join builds a flat string
    let full;
    if (tail.length >= TAIL_CHUNK) {
      full = s.head = s.head + tail;
      s.tail = '';
    } else {
      s.tail = tail;
      full = s.head + tail;
    }
    // The base is the first copy, not the held part: a part that streams
    // starts without text (an empty field is left out), and a spread that
    // adds a field is the slow kind too. The text is assigned after the
    // spread, not written in it: `{ ...base, text }` redefines a field the
    // clone has, which V8 does not cache (the store missed its inline cache
    // on every delta, about 0.3 us).
    const part = { ...(s.base ?? cur) };
    part.text = full;
    if (s.base === null) s.base = part;
    s.made = part;
    parts[i] = part;
    const message = { ...b.base, parts };
    b.message = message;
    return message;
  }

  // A patch of a message this copy lacks: a host bug. Start over.
  _unknownMessage(id) {
    this.dirty = true;
    if (this.core) this.core.broken = true;
    this._rebuild(new AgentsyncError(CORE_BROKEN, `changes: patch of unknown message ${id}`));
    return false;
  }

  // Queues a change event for the next notification. Text appended to
  // parts that the queued one appended to too is merged into it, so a
  // flush that spans several takes tells of them once; anything else (a
  // part or message taken whole) is an event of its own, so a renderer
  // appends what it can and redraws only what it must.
  _pushChange(change) {
    const pending = this.pendingChanges;
    if (change.reset) pending.length = 0;
    const last = pending.length > 0 ? pending[pending.length - 1] : undefined; // [-1] is a slow named lookup
    if (!change.reset && last && !last.reset && appendsOnlyTo(last, change)) mergeAppends(last, change);
    else if (change.reset || change.messages.length > 0) pending.push(change);
  }

  _emit(type, arg) {
    const set = this.handlers.get(type);
    if (set) for (const fn of set) safeCall(fn, arg, this);
    else if (type === 'error') this._log('agentsync error', arg);
  }
}

// A committed revision of a held message comes whole but for the beginning
// of the texts the host holds (kept_texts, protocol §7.4): each part named
// takes the held part's text (same id) followed by the rest it carries; a
// text that did not change is then the held string itself, so a renderer
// that compares texts finds them equal at once. Returns false when the
// held message or a part is missing (a host bug).
function keepTexts(held, mc) {
  if (held === null) return false;
  const parts = mc.message.parts;
  for (const id of mc.kept_texts) {
    const from = held.parts.find((p) => p.part_id === id);
    const to = parts.findIndex((p) => p.part_id === id);
    if (from === undefined || to < 0) return false;
    parts[to].text = (from.text ?? '') + (parts[to].text ?? ''); // a part just decoded, nobody else's
  }
  return true;
}

// The change record of a message taken whole: every part, none appended.
function wholeChange(message) {
  return { message_id: message.message_id, message, parts: message.parts.map((part, index) => ({ index, part })) };
}

// A held message patched with a MessageChange: a new message object and a
// new parts array; a part replaced or grown is a new object, the others are
// shared with the previous view. Null for a kept text of a part the held
// message lacks (a host bug). Text grows by concatenation, which V8 makes
// without copying the text held.
function patchMessage(held, mc) {
  const parts = held.parts.slice();
  const changed = [];
  for (const pc of mc.parts ?? []) {
    if (pc.kept_text) {
      // The part continues the held one's text, which is not sent again.
      if (pc.index >= parts.length) return null;
      pc.part.text = (parts[pc.index].text ?? '') + (pc.part.text ?? ''); // a part just decoded, nobody else's
    }
    parts[pc.index] = pc.part;
    changed.push({ index: pc.index, part: pc.part });
  }
  for (const a of mc.appends ?? []) {
    const p = parts[a.index];
    const part = { ...p, text: (p.text ?? '') + a.text };
    parts[a.index] = part;
    changed.push({ index: a.index, part, appended: a.text });
  }
  return { message: { ...held, parts }, parts: changed };
}

// appendsOnlyTo reports whether every part of change `next` only had text
// appended, to a part whose change in `prev` is an append too (or is not in
// prev at all).
function appendsOnlyTo(prev, next) {
  for (const nm of next.messages) {
    const pm = prev.messages.find((m) => m.message_id === nm.message_id);
    for (const np of nm.parts) {
      if (np.appended === undefined) return false;
      const pp = pm?.parts.find((x) => x.index === np.index);
      if (pp && pp.appended === undefined) return false;
    }
  }
  return true;
}

// Folds the appends of `next` into `prev` (queued, not yet emitted): per
// message and part the newest object, with the text appended by both.
function mergeAppends(prev, next) {
  for (const nm of next.messages) {
    const pm = prev.messages.find((m) => m.message_id === nm.message_id);
    if (!pm) {
      prev.messages.push(nm);
      continue;
    }
    pm.message = nm.message;
    for (const np of nm.parts) {
      const pp = pm.parts.find((x) => x.index === np.index);
      if (!pp) pm.parts.push(np);
      else {
        pp.appended += np.appended;
        pp.part = np.part;
      }
    }
  }
}

// Inserts m into messages (ordered by sequence).
function insertBySequence(messages, m) {
  let i = messages.length;
  while (i > 0 && messages[i - 1].sequence > m.sequence) i--;
  messages.splice(i, 0, m);
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
