// The local cache and the outbox of a session (protocol §6.9): what the
// host keeps on the device so that a reload renders at once and a message
// sent offline is not lost. Everything here is the host's: the core
// (synccore, the WebAssembly module) never hears of it. Two rules make the
// cache trivially correct:
//   - done is final: a cached user message, or an agent message whose state
//     is done, is valid for ever;
//   - the core's first snapshot read after a reload is answered with the
//     cached window merged with pages read from the head back to the oldest
//     cached message that is not done (§6.5's target), so the core starts
//     with the window it would have had, after reading one page, usually.
// Pending sends are an overlay on the core's view: never in the core.
//
// A CacheStore keeps windows (per principal, session and include_internal)
// and outbox entries (per principal and session). Two come with the
// package: MemoryCacheStore (tests, or a page that wants no persistence
// beyond its life) and IndexedDBCacheStore (browsers, through `idb`).

import { AgentsyncError, NETWORK } from './errors.js';
import { decode, encode } from './msgpack.js';
import { newIdempotencyKey, pageQuery, postIdempotent, sessionPath } from './http.js';

/** The most messages a window keeps per session (the newest ones). */
export const DEFAULT_MAX_MESSAGES = 2000;
/** The most sessions a store keeps windows of (the most recently written). */
export const DEFAULT_MAX_SESSIONS = 50;

const SEP = '\u001f';
const bySequence = (a, b) => a.sequence - b.sequence;
const done = (m) => m.role === 'user' || m.state === 'done';

// A deep copy through the structured clone algorithm (what IndexedDB stores).
const clone = (v) => (typeof structuredClone === 'function' ? structuredClone(v) : JSON.parse(JSON.stringify(v)));

/**
 * A CacheStore in memory: windows and outboxes live as long as the object.
 * Share one between Sessions to keep a cache across them.
 */
export class MemoryCacheStore {
  constructor() {
    this.windows = new Map(); // key -> {meta, touched, messages: Map(sequence -> message)}
    this.boxes = new Map(); // key -> Map(id -> entry)
    this.meta = new Map();
  }

  async load(key) {
    const w = this.windows.get(key);
    if (!w) return null;
    return { meta: clone(w.meta), messages: [...w.messages.values()].sort(bySequence).map(clone) };
  }

  async write(key, { meta, put, keepFrom }) {
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = { meta, touched: 0, messages: new Map() }));
    w.meta = clone(meta);
    w.touched = Date.now();
    for (const m of put) w.messages.set(m.sequence, clone(m));
    if (keepFrom > 0) for (const s of w.messages.keys()) if (s < keepFrom) w.messages.delete(s);
  }

  async delete(key) {
    this.windows.delete(key);
  }

  async list() {
    return [...this.windows].map(([key, w]) => ({ key, touched: w.touched }));
  }

  async clear(prefix = '') {
    for (const k of [...this.windows.keys()]) if (k.startsWith(prefix)) this.windows.delete(k);
    for (const k of [...this.boxes.keys()]) if (k.startsWith(prefix)) this.boxes.delete(k);
    if (prefix === '') this.meta.clear();
  }

  async outbox(key) {
    return [...(this.boxes.get(key)?.values() ?? [])].map(clone).sort((a, b) => a.order - b.order);
  }

  async putOutbox(key, entry) {
    let box = this.boxes.get(key);
    if (!box) this.boxes.set(key, (box = new Map()));
    box.set(entry.id, clone(entry));
  }

  async deleteOutbox(key, id) {
    this.boxes.get(key)?.delete(id);
  }

  async getMeta(name) {
    return this.meta.get(name);
  }

  async setMeta(name, value) {
    this.meta.set(name, value);
  }
}

/**
 * A CacheStore in IndexedDB, through `idb` (imported when first used; a
 * page that loads the package unbundled maps `idb` with an import map, or
 * passes `openDB`). One database, `name` (default "agentsync"), holds every
 * principal's windows and outboxes of the origin. A window's done messages
 * are one record (read in one go on a reload: a record per message made a
 * 1,000-message read several times slower), rewritten only when a message
 * is done; the messages not done are a record each, rewritten as they
 * stream.
 */
export class IndexedDBCacheStore {
  /** @param {{name?: string, openDB?: Function}} [opts] */
  constructor(opts = {}) {
    this.name = opts.name ?? 'agentsync';
    this.openDB = opts.openDB ?? null;
    this.dbp = null;
    this.mirrors = new Map(); // key -> Map(sequence -> done message), as last read or written
  }

  db() {
    this.dbp ??= (async () => {
      const openDB = this.openDB ?? (await import('idb')).openDB;
      return openDB(this.name, 1, {
        upgrade(db) {
          db.createObjectStore('windows', { keyPath: 'key' }); // {key, meta, touched}
          db.createObjectStore('done', { keyPath: 'key' }); // {key, messages}
          db.createObjectStore('tail', { keyPath: ['key', 'sequence'] }); // {key, sequence, message}
          db.createObjectStore('outbox', { keyPath: ['key', 'id'] });
          db.createObjectStore('meta');
        },
      });
    })();
    return this.dbp;
  }

  async load(key) {
    const db = await this.db();
    const tx = db.transaction(['windows', 'done', 'tail'], 'readonly');
    const [w, d, rows] = await Promise.all([tx.objectStore('windows').get(key), tx.objectStore('done').get(key), tx.objectStore('tail').getAll(range(key)), tx.done]);
    if (!w) return null;
    const done = d?.messages ?? [];
    this.mirrors.set(key, new Map(done.map((m) => [m.sequence, m])));
    const messages = done.slice();
    const have = new Set(done.map((m) => m.sequence));
    for (const r of rows) if (!have.has(r.sequence)) messages.push(r.message); // done is final: it wins
    messages.sort(bySequence);
    return { meta: w.meta, messages };
  }

  async write(key, { meta, put, keepFrom }) {
    const db = await this.db();
    let mirror = this.mirrors.get(key);
    if (!mirror) {
      const d = await db.get('done', key);
      mirror = new Map((d?.messages ?? []).map((m) => [m.sequence, m]));
      this.mirrors.set(key, mirror);
    }
    const tx = db.transaction(['windows', 'done', 'tail'], 'readwrite');
    const tail = tx.objectStore('tail');
    const work = [tx.objectStore('windows').put({ key, meta, touched: Date.now() })];
    let doneChanged = false;
    for (const m of put) {
      if (done(m)) {
        mirror.set(m.sequence, m);
        doneChanged = true;
        work.push(tail.delete([key, m.sequence]));
      } else {
        work.push(tail.put({ key, sequence: m.sequence, message: m }));
      }
    }
    if (keepFrom > 0) {
      for (const s of [...mirror.keys()]) {
        if (s < keepFrom) {
          mirror.delete(s);
          doneChanged = true;
        }
      }
      work.push(tail.delete(IDBKeyRange.bound([key, -Infinity], [key, keepFrom], false, true)));
    }
    if (doneChanged) work.push(tx.objectStore('done').put({ key, messages: [...mirror.values()].sort(bySequence) }));
    await Promise.all([...work, tx.done]);
  }

  async delete(key) {
    this.mirrors.delete(key);
    const db = await this.db();
    const tx = db.transaction(['windows', 'done', 'tail'], 'readwrite');
    await Promise.all([tx.objectStore('windows').delete(key), tx.objectStore('done').delete(key), tx.objectStore('tail').delete(range(key)), tx.done]);
  }

  async list() {
    const db = await this.db();
    const all = await db.getAll('windows');
    return all.map((w) => ({ key: w.key, touched: w.touched }));
  }

  async clear(prefix = '') {
    const db = await this.db();
    const names = ['windows', 'done', 'tail', 'outbox', 'meta'];
    const tx = db.transaction(names, 'readwrite');
    const work = [];
    if (prefix === '') {
      this.mirrors.clear();
      for (const n of names) work.push(tx.objectStore(n).clear());
    } else {
      for (const k of await tx.objectStore('windows').getAllKeys()) {
        if (!k.startsWith(prefix)) continue;
        this.mirrors.delete(k);
        work.push(tx.objectStore('windows').delete(k), tx.objectStore('done').delete(k), tx.objectStore('tail').delete(range(k)));
      }
      for (const k of await tx.objectStore('outbox').getAllKeys()) if (k[0].startsWith(prefix)) work.push(tx.objectStore('outbox').delete(k));
    }
    await Promise.all([...work, tx.done]);
  }

  async outbox(key) {
    const db = await this.db();
    const rows = await db.getAll('outbox', IDBKeyRange.bound([key, ''], [key, '\uffff']));
    return rows.map((r) => r.entry).sort((a, b) => a.order - b.order);
  }

  async putOutbox(key, entry) {
    const db = await this.db();
    await db.put('outbox', { key, id: entry.id, entry });
  }

  async deleteOutbox(key, id) {
    const db = await this.db();
    await db.delete('outbox', [key, id]);
  }

  async getMeta(name) {
    return (await this.db()).get('meta', name);
  }

  async setMeta(name, value) {
    await (await this.db()).put('meta', value, name);
  }
}

function range(key) {
  return IDBKeyRange.bound([key, -Infinity], [key, Infinity]);
}

/**
 * Who the cache belongs to: the option's principal, else the bearer JWT's
 * `sub`, else a digest of the token, else "shared" (no auth). A device's
 * cache never serves one principal another's sessions.
 */
export async function principalOf(token, given) {
  if (given) return String(given);
  if (!token) return 'shared';
  const parts = token.split('.');
  if (parts.length === 3) {
    try {
      const json = JSON.parse(atob(parts[1].replace(/-/g, '+').replace(/_/g, '/')));
      if (typeof json.sub === 'string' && json.sub !== '') return `sub:${json.sub}`;
    } catch {
      // not a JWT: digest it
    }
  }
  const d = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return `token:${Array.from(new Uint8Array(d).slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The default store of `cache: true`: IndexedDB where there is one, else memory. */
export function defaultStore() {
  return typeof globalThis.indexedDB !== 'undefined' ? new IndexedDBCacheStore() : new MemoryCacheStore();
}

/**
 * Removes every cached window and outbox of the store (all principals), as
 * a sign-out does: `clearCache()` or `clearCache({store})`.
 */
export async function clearCache(opts = {}) {
  await (opts.store ?? defaultStore()).clear();
}

// The codes a send stays queued after (tried again when the session is
// live): the server could not be reached or refused for now.
const QUEUED_CODES = new Set([NETWORK, 'closed', 'rate_limited', 'timeout']);

/**
 * Whether err says the server cannot be reached: no answer at all (code
 * network), or a gateway's 502 or 504 in front of a server that is down.
 */
export function unreachable(err) {
  return !!err && (err.code === NETWORK || err.status === 502 || err.status === 504);
}

/**
 * One session's cache and outbox. The Session calls: restore() while it
 * opens, page() for every page the core asks for, shown(base) for the view
 * it hands out, changed() after every notification, status(s) on every
 * status change, invalidate() when the session is gone.
 */
export class LocalCache {
  /**
   * @param {import('./index.js').Session} session
   * @param {object} opts the connect options: cache (true, a CacheStore,
   *   or {store?, principal?, maxMessages?, maxSessions?, keepOtherPrincipals?}),
   *   outbox (true: optimistic sends and an outbox, also without a cache)
   */
  constructor(session, opts) {
    this.session = session;
    const c = opts.cache;
    const o = c && typeof c === 'object' && typeof c.load !== 'function' ? c : {};
    /** @type {object | null} */
    this.store = !c ? null : typeof c.load === 'function' ? c : o.store ?? defaultStore();
    // Without a store, an outbox lives as long as the page: optimistic
    // sends still work, a reload loses the queue.
    this.box = this.store ?? (opts.outbox ? new MemoryCacheStore() : null);
    this.outboxOn = opts.outbox ?? !!this.store;
    this.principalOpt = o.principal;
    this.maxMessages = o.maxMessages ?? DEFAULT_MAX_MESSAGES;
    this.maxSessions = o.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.keepOthers = !!o.keepOtherPrincipals;
    this.principal = null;
    /** The restored window ({meta, messages}), shown until the core is live. */
    this.cached = null;
    this.armed = false; // the next head read is answered with the cached window merged in
    this.live = false; // the core has been live since restore: its view is the one to show and save
    this.written = new Map(); // message_id -> {revision, message} last written
    this.writtenKey = null;
    this.saving = null;
    this.saveAgain = false;
    this.pruned = false;
    this.invalidated = false;
    /** The outbox, in order: {id, idempotency_key, parts, body, created_at, after, order, state, error?, message?}. */
    this.entries = [];
    this.waiters = new Map(); // entry id -> {resolve, reject}
    this.draining = false;
    this.version = 0; // bumped when the overlay changes
    this.memo = null;
    this.pendingMsgs = new Map(); // entry id -> the pending message shown (kept identity)
    /** Bytes read from the server by the cached head read (bench, tests). */
    this.catchUpBytes = 0;
  }

  windowKey(internal = this.session.includeInternal) {
    return `${this.principal}${SEP}${this.session.sessionId}${internal ? `${SEP}i` : ''}`;
  }

  boxKey() {
    return `${this.principal}${SEP}${this.session.sessionId}`;
  }

  /** Loads the cached window and the outbox; true if a window is shown. */
  async restore() {
    const s = this.session;
    this.principal = await principalOf(await s.http.currentToken(), this.principalOpt);
    if (this.store) {
      try {
        // Both at once: the window's key is this principal's anyway.
        let [last, w] = await Promise.all([this.store.getMeta('principal'), this.store.load(this.windowKey())]);
        if (last !== undefined && last !== this.principal && !this.keepOthers) {
          await this.store.clear();
          w = null;
        }
        if (last !== this.principal) await this.store.setMeta('principal', this.principal);
        if (w && w.messages.length > 0 && !s.closed && !this.live) {
          this.cached = w;
          this.armed = true;
          for (const m of w.messages) this.written.set(m.message_id, { revision: m.revision, message: null });
          this.writtenKey = this.windowKey();
        }
      } catch (err) {
        s._log('agentsync cache: restore failed', err);
      }
    }
    if (this.box) {
      try {
        const saved = await this.box.outbox(this.boxKey());
        for (const e of saved) {
          if (this.entries.some((x) => x.id === e.id)) continue;
          if (e.state === 'sending') e.state = 'queued'; // cut by a reload: its key makes the resend safe
          this.entries.push(e);
        }
        this.entries.sort((a, b) => a.order - b.order);
      } catch (err) {
        s._log('agentsync cache: outbox restore failed', err);
      }
    }
    this.touch();
    if (this.cached && s.status === 'idle') s._setStatus('cached', 'rendered from the local cache');
    this.drain();
    return !!this.cached;
  }

  /** The view to hand out: the core's, or the cached window before the core is live, with pending sends after. */
  shown(base) {
    const fromCache = this.cached !== null && !this.live;
    const offline = this.session.offline;
    const m = this.memo;
    if (m && m.base === base && m.version === this.version && m.offline === offline) return m.view;
    let messages = fromCache ? this.cached.messages : base.messages;
    messages = this.overlay(messages);
    const view = { ...base, messages, cached: fromCache, offline };
    if (fromCache) {
      const meta = this.cached.meta;
      view.total = Math.max(base.total ?? 0, meta.total ?? 0);
      view.has_more_older = !!meta.has_more_older;
      if (meta.next_before_sequence) view.next_before_sequence = meta.next_before_sequence;
      else delete view.next_before_sequence;
    }
    this.memo = { base, version: this.version, offline, view };
    return view;
  }

  // messages with the outbox after them: a pending (or failed) send as a
  // user message marked pending (failed), a committed one as the server's
  // message until the view holds it; never both, never neither.
  overlay(messages) {
    if (this.entries.length === 0) return messages;
    const ids = new Set();
    for (const m of messages) if (m.role === 'user') ids.add(m.message_id);
    const claimed = new Set();
    const extra = [];
    let seq = messages.length > 0 ? messages[messages.length - 1].sequence : 0;
    for (const e of this.entries) {
      if (e.message) {
        if (!ids.has(e.message.message_id)) extra.push(e.message);
        continue;
      }
      // Committed, its answer not back yet, but the stream brought it: the
      // same parts in a user message newer than the send.
      const twin = messages.find((m) => m.role === 'user' && m.sequence > e.after && !claimed.has(m.message_id) && sameParts(m.parts, e.body.parts));
      if (twin && e.state === 'sending') {
        claimed.add(twin.message_id);
        continue;
      }
      extra.push(this.pendingMessage(e, ++seq));
    }
    return extra.length === 0 ? messages : [...messages, ...extra];
  }

  pendingMessage(e, sequence) {
    const held = this.pendingMsgs.get(e.id);
    if (held && held.sequence === sequence && held.state === e.state && held.error === e.error) return held.message;
    const message = {
      message_id: `pending:${e.id}`,
      session_id: this.session.sessionId,
      sequence, // provisional: the server numbers it when it commits
      revision: 0,
      role: 'user',
      turn_id: '',
      visibility: e.body.visibility ?? 'visible',
      created_at: e.created_at,
      parts: e.body.parts.map((p, i) => ({ ...p, part_id: `pending:${e.id}:${i}`, sequence: i + 1 })),
      pending: e.state !== 'failed',
      outbox_id: e.id,
    };
    if (e.state === 'failed') {
      message.failed = true;
      message.error = e.error;
    }
    this.pendingMsgs.set(e.id, { sequence, state: e.state, error: e.error, message });
    return message;
  }

  touch() {
    this.version++;
    this.session._schedule();
  }

  /** For the loop: the bytes of a page the core asked for. */
  async page(cmd, path) {
    const http = this.session.http;
    if (!this.armed || cmd.before_sequence || !this.cached || !!cmd.include_internal !== !!this.cached.meta.include_internal) return http.msgpack(path);
    const cached = this.cached.messages;
    const newest = cached[cached.length - 1].sequence;
    let target = newest + 1;
    for (const m of cached) {
      if (!done(m)) {
        target = m.sequence;
        break;
      }
    }
    // From the head back to the target (§6.5), as the core would after a reconnect.
    const sid = cmd.session_id || this.session.sessionId;
    const pages = [];
    let bytes = 0;
    let before = 0;
    for (;;) {
      const q = pageQuery({ limit: cmd.limit || undefined, before_sequence: before || undefined, include_internal: !!cmd.include_internal });
      const raw = await http.msgpack(sessionPath(sid, `/messages${q}`));
      bytes += raw.length;
      const p = decode(raw);
      pages.push(p);
      const items = p.items ?? [];
      if (!p.has_more || !p.next_before_sequence || items.length === 0 || items[0].sequence <= target) break;
      if (before && p.next_before_sequence >= before) break;
      before = p.next_before_sequence;
    }
    this.catchUpBytes = bytes;
    this.armed = false;
    const head = pages[0];
    const oldestPage = pages[pages.length - 1];
    const fresh = pages.slice().reverse().flatMap((p) => p.items ?? []);
    const from = fresh.length > 0 ? fresh[0].sequence : Infinity;
    // A cached message the server numbers otherwise, or a head older than
    // the cache: not this session's history any more. Never served stale.
    const bySeq = new Map(cached.map((m) => [m.sequence, m.message_id]));
    const stale = (head.total ?? 0) < newest || fresh.some((m) => bySeq.has(m.sequence) && bySeq.get(m.sequence) !== m.message_id);
    if (stale) {
      this.dropWindow();
      return encode(oldestPage === head ? head : { ...head, items: fresh, has_more: oldestPage.has_more, next_before_sequence: oldestPage.next_before_sequence });
    }
    const older = cached.filter((m) => m.sequence < from);
    const items = [...older, ...fresh];
    const meta = this.cached.meta;
    const page = { items, total: head.total, has_more: older.length > 0 ? !!meta.has_more_older : !!oldestPage.has_more };
    const nb = older.length > 0 ? meta.next_before_sequence : oldestPage.next_before_sequence;
    if (nb) page.next_before_sequence = nb;
    if (items.length > 0) {
      page.start_sequence = items[0].sequence;
      page.end_sequence = items[items.length - 1].sequence;
    }
    return encode(page);
  }

  /** For the Session: its status changed. */
  status(status) {
    if (status === 'live') {
      if (!this.live) {
        this.live = true;
        this.version++;
      }
      this.drain();
      this.changed();
    }
  }

  /** For the Session: a notification went out; saves what changed (debounced) and drops sends the view now holds. */
  changed() {
    const base = this.session.patcher.view;
    if (this.entries.some((e) => e.message)) {
      const ids = new Set(base.messages.map((m) => m.message_id));
      const before = this.entries.length;
      this.entries = this.entries.filter((e) => !(e.message && ids.has(e.message.message_id)));
      if (this.entries.length !== before) this.touch();
    }
    if (!this.store || !this.live || this.session.closed) return;
    if (this.saving) {
      this.saveAgain = true;
      return;
    }
    this.saving = new Promise((r) => setTimeout(r, 50)).then(() => this.save()).catch((err) => this.session._log('agentsync cache: save failed', err)).finally(() => {
      this.saving = null;
      if (this.saveAgain) {
        this.saveAgain = false;
        this.changed();
      }
    });
  }

  /** Writes the core's window (what changed since the last write). Resolves when written. */
  async save() {
    const s = this.session;
    const v = s.patcher.view;
    if (!this.store || !this.live || this.invalidated || (v.status !== 'live' && v.messages.length === 0)) return;
    const key = this.windowKey();
    if (key !== this.writtenKey) {
      this.written.clear();
      this.writtenKey = key;
    }
    let msgs = v.messages;
    const trimmed = msgs.length > this.maxMessages;
    if (trimmed) msgs = msgs.slice(msgs.length - this.maxMessages);
    const put = [];
    for (const m of msgs) {
      const w = this.written.get(m.message_id);
      if (w && w.revision === m.revision && (done(m) || w.message === m)) continue;
      put.push(m);
    }
    const meta = {
      total: v.total ?? 0,
      has_more_older: trimmed ? true : !!v.has_more_older,
      next_before_sequence: trimmed ? msgs[0].sequence : v.next_before_sequence ?? 0,
      include_internal: !!v.include_internal,
      saved_at: Date.now(),
    };
    await this.store.write(key, { meta, put, keepFrom: trimmed ? msgs[0].sequence : 0 });
    for (const m of put) this.written.set(m.message_id, { revision: m.revision, message: m });
    if (!this.pruned) {
      this.pruned = true;
      const all = await this.store.list();
      if (all.length > this.maxSessions) {
        all.sort((a, b) => b.touched - a.touched);
        for (const w of all.slice(this.maxSessions)) await this.store.delete(w.key);
      }
    }
  }

  /** Waits for the writes under way (tests, before a reload). */
  async flush() {
    while (this.saving) await this.saving;
    if (this.store && this.live) await this.save();
  }

  dropWindow() {
    this.cached = null;
    this.armed = false;
    this.written.clear();
    this.touch();
    return this.store?.delete(this.windowKey()).catch(() => {});
  }

  /** The session is gone (404, deleted): its window and outbox go. */
  async invalidate() {
    this.invalidated = true;
    this.cached = null;
    this.armed = false;
    this.written.clear();
    const waiting = [...this.waiters.values()];
    this.waiters.clear();
    for (const w of waiting) w.reject(new AgentsyncError('not_found', `session "${this.session.sessionId}" not found`));
    this.entries = [];
    this.touch();
    if (!this.principal) return;
    try {
      await this.store?.delete(this.windowKey(false));
      await this.store?.delete(this.windowKey(true));
      for (const e of (await this.box?.outbox(this.boxKey())) ?? []) await this.box.deleteOutbox(this.boxKey(), e.id);
    } catch (err) {
      this.session._log('agentsync cache: invalidate failed', err);
    }
  }

  /** Every window and outbox of the store goes (sign-out); this session's view is the core's. */
  async clearAll() {
    this.cached = null;
    this.armed = false;
    this.written.clear();
    this.touch();
    await this.store?.clear();
  }

  // ---------------------------------------------------------------- outbox

  /** The outbox as the app reads it: copies, in order. */
  get outbox() {
    return this.entries.filter((e) => !e.message).map((e) => ({
      id: e.id,
      idempotency_key: e.idempotency_key,
      parts: e.body.parts,
      created_at: e.created_at,
      state: e.state,
      error: e.error,
    }));
  }

  /** send() with optimistic rendering: shown at once, posted in order, kept across reloads. */
  async send(body, opts) {
    const key = opts.idempotencyKey ?? newIdempotencyKey();
    const v = this.session.patcher.view;
    const shownMsgs = this.cached && !this.live ? this.cached.messages : v.messages;
    const last = shownMsgs.length > 0 ? shownMsgs[shownMsgs.length - 1].sequence : 0;
    const order = Math.max(Date.now(), ...this.entries.map((e) => e.order + 1));
    const entry = { id: key, idempotency_key: key, body, created_at: Date.now(), after: last, order, state: 'queued' };
    this.entries.push(entry);
    const committed = new Promise((resolve, reject) => this.waiters.set(entry.id, { resolve, reject }));
    this.touch();
    if (this.principal === null) this.principal = await principalOf(await this.session.http.currentToken(), this.principalOpt);
    // Persisted before it is posted: a reload from here on posts it (once, by its key).
    await this.box.putOutbox(this.boxKey(), entry);
    this.drain();
    return committed;
  }

  /** Posts the queued sends in order, one at a time; stops at the first that cannot reach the server. */
  async drain() {
    if (this.draining || this.principal === null) return;
    this.draining = true;
    const s = this.session;
    try {
      while (!s.closed) {
        const e = this.entries.find((x) => x.state === 'queued');
        if (!e) return;
        e.state = 'sending';
        this.touch();
        let msg;
        try {
          msg = await postIdempotent(s.http, sessionPath(s.sessionId, '/messages'), e.body, {
            key: e.idempotency_key,
            retries: 3,
            wait: (ms) => s._pause(ms),
            what: 'send',
          });
        } catch (err) {
          const code = err?.code ?? NETWORK;
          if (QUEUED_CODES.has(code) || unreachable(err) || s.closed) {
            e.state = 'queued'; // tried again once the session is live
            this.touch();
            // Live meanwhile (the retries outlasted the outage): again soon.
            if (s.status === 'live' && !s.closed) setTimeout(() => this.drain(), 1000);
            return;
          }
          e.state = 'failed';
          e.error = { code, message: err?.detail ?? String(err?.message ?? err) };
          this.touch();
          await this.box.putOutbox(this.boxKey(), e).catch(() => {});
          this.settle(e.id, null, err);
          continue;
        }
        e.state = 'committed';
        e.message = msg;
        this.touch();
        await this.box.deleteOutbox(this.boxKey(), e.id).catch(() => {});
        this.settle(e.id, msg, null);
        this.changed();
      }
    } finally {
      this.draining = false;
    }
  }

  settle(id, msg, err) {
    const w = this.waiters.get(id);
    if (!w) return;
    this.waiters.delete(id);
    if (err) w.reject(err);
    else w.resolve(msg);
  }

  /** A failed send is queued again (same idempotency key); resolves with the message once committed. */
  retrySend(id) {
    const e = this.entries.find((x) => x.id === id && x.state === 'failed');
    if (!e) return Promise.reject(new AgentsyncError('bad_request', `retrySend: no failed send ${id}`));
    e.state = 'queued';
    delete e.error;
    const p = new Promise((resolve, reject) => this.waiters.set(e.id, { resolve, reject }));
    this.touch();
    this.box.putOutbox(this.boxKey(), e).then(() => this.drain(), () => this.drain());
    return p;
  }

  /** Drops a send that is not committed (failed, or still queued); resolves whether one was dropped. */
  async discardSend(id) {
    const e = this.entries.find((x) => x.id === id && !x.message && x.state !== 'sending');
    if (!e) return false;
    this.entries = this.entries.filter((x) => x !== e);
    this.settle(e.id, null, new AgentsyncError('closed', 'send discarded'));
    this.touch();
    await this.box.deleteOutbox(this.boxKey(), e.id);
    return true;
  }

  /** Drops every send that is not committed nor being posted. */
  async clearOutbox() {
    for (const e of this.entries.filter((x) => !x.message && x.state !== 'sending')) await this.discardSend(e.id);
  }
}

// Whether a committed message's parts are the ones a send posted (the
// server adds ids and numbers, keeps the rest).
function sameParts(have, sent) {
  if (!have || have.length !== sent.length) return false;
  for (let i = 0; i < sent.length; i++) {
    const a = have[i];
    const b = sent[i];
    if (a.type !== b.type || (a.text ?? '') !== (b.text ?? '') || (a.url ?? '') !== (b.url ?? '') || (a.context ?? '') !== (b.context ?? '')) return false;
  }
  return true;
}
