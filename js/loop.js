// The session loop: one WebAssembly core fed the session's events one at a
// time, in order, and its commands carried out with web APIs (a WebSocket,
// fetch, setTimeout). The core decides everything (what to subscribe,
// which page to read, when to back off); the loop owns what that takes:
// the event queue, the socket, the timers, page requests and their
// waiters, and rebuilding the core after a trap. It hands what the core
// says changed to the view patcher, and status and errors to its host.
//
// Lifecycle: every socket, timer and page answer belongs to a generation
// (gen), bumped by a rebuild and by close(); whatever an older generation
// asks for afterwards is dropped, and a command list cut short by either
// (a 'status' listener that closes, say) runs no further.

import { COMPACT, Core } from './core.js';
import { RENDER_ONLY } from './changes.js';
import { AgentsyncError, CORE_BROKEN, NETWORK, TERMINAL_CODES } from './errors.js';
import { pageQuery, sessionPath } from './http.js';

/** A jitter in 0..1000 for the core's backoff: the core has no randomness. */
function jitter() {
  return Math.floor(Math.random() * 1001);
}

/**
 * The loop of one session. Its host (the Session) gives it sessionId,
 * includeInternal, pageLimit, flushScheduled (a notification is pending
 * already) and these callbacks: _emit(type, arg), _setStatus(status,
 * reason), _schedule() (a notification is due) and _log(...args).
 */
export class Loop {
  /**
   * @param {object} host the Session
   * @param {import('./patcher.js').ViewPatcher} patcher
   * @param {{http: import('./http.js').Http, WebSocket: typeof WebSocket, token?: string, wasm: WebAssembly.Module | null}} io
   */
  constructor(host, patcher, io) {
    this.host = host;
    this.patcher = patcher;
    this.http = io.http;
    this.WebSocket = io.WebSocket;
    this.wsBase = io.http.base.replace(/^http/i, 'ws');
    this.module = null;
    this.core = null;
    this.gen = 0; // bumped on rebuild and close: late callbacks of an older generation are dropped
    this.ws = null;
    this.timers = new Map(); // setTimeout handle -> the core's timer_id
    this.pageWaiters = new Map(); // request_id -> {resolve, reject}
    this.queue = [];
    this.replies = new Map(); // queued event -> callback for its Output (request)
    this.handling = false;
    this.closed = false;
    this.rebuilding = null;
    /** How many times the core was discarded and rebuilt (a trap or a core_broken error). */
    this.rebuilds = 0;
    this.dirty = true; // the core handled events since the view was patched
  }

  /** Loads the core on module and starts it, unless closed meanwhile. */
  async open(module) {
    this.module = module;
    const core = await Core.load(module, this.coreOpts());
    if (this.closed) {
      // Closed while loading: the core is nobody's.
      core.free();
      return;
    }
    this.core = core;
    this.start();
  }

  coreOpts() {
    return { stderr: (line) => this.host._log('wasm', line), stdout: (line) => this.host._log('wasm', line) };
  }

  start() {
    const h = this.host;
    const ev = { type: 'start', session_id: h.sessionId, include_internal: h.includeInternal };
    if (h.pageLimit) ev.page_limit = h.pageLimit;
    this.dirty = true;
    this.dispatch(ev);
  }

  // Why an event cannot be handled now: the session is closed, or its core
  // is being rebuilt.
  unavailable(what) {
    if (this.closed) return new AgentsyncError('closed', `${what}: session closed`);
    return new AgentsyncError(CORE_BROKEN, `${what}: the core is being rebuilt; try again once the session is live`);
  }

  /**
   * Handles ev now, or after the event being handled: an event dispatched
   * while another is handled (by a command carried out, or a listener such
   * as a 'status' one) queues behind it. reply, if given, is called with
   * the event's Output once it is handled, or (undefined, error) if it
   * never will be (the session closed, or the core was rebuilt, first).
   */
  dispatch(ev, reply) {
    if (this.closed || !this.core) {
      reply?.(undefined, this.unavailable(ev.type ?? 'event'));
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
      last = this.handleAndReply(ev);
      while (this.queue.length > 0) last = this.handleAndReply(this.queue.shift());
    } finally {
      this.handling = false;
    }
    return last;
  }

  // Handles ev and answers whoever waits for its Output: with why it is
  // void if its generation ended meanwhile (a listener closed the session,
  // or the core broke), since the pages it asked for will never come.
  handleAndReply(ev) {
    const gen = this.gen;
    const out = this.handleOne(ev);
    if (this.replies.size > 0) this.reply(ev, out, this.gen === gen ? undefined : this.unavailable(ev.type));
    return out;
  }

  reply(ev, out, err) {
    if (this.replies.size === 0) return;
    const reply = this.replies.get(ev);
    if (!reply) return;
    this.replies.delete(ev);
    reply(out, err);
  }

  handleOne(ev) {
    const core = this.core;
    if (!core || this.closed) return undefined;
    const gen = this.gen;
    let out;
    let changes = null;
    try {
      if (ev instanceof Uint8Array && !this.host.flushScheduled) {
        // One call handles the frames and takes what they changed (ABI v3);
        // a delta to the part the last one went to comes back compact (v4).
        const res = core.handleCompact(ev);
        if (res === COMPACT) {
          if (this.patcher.applyCompact(core)) this.host._schedule();
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
        this.rebuild(err);
        return undefined;
      }
      const e = err instanceof AgentsyncError ? err : new AgentsyncError('bad_request', String(err?.message ?? err));
      this.host._emit('error', e);
      if (isPageAnswer(ev)) this.settlePage(ev, { code: e.code, message: e.detail });
      return undefined;
    }
    if (out.error) {
      const err = new AgentsyncError(out.error.code, out.error.message ?? '');
      // core.broken is set by core_broken alone: a server's error frame
      // (code internal, say) is reported, and its resync commands run.
      if (core.broken) {
        this.rebuild(err);
        return undefined;
      }
      this.host._emit('error', err);
    }
    if (changes === null) this.dirty = true; // taken at the next flush
    this.run(out.commands);
    // A listener the commands reached may have closed the session or
    // rebuilt its core: what this generation took is nobody's now.
    if (this.gen !== gen) return out;
    if (changes !== null) {
      // Taken with the frames: everything since the last take, so the view
      // is patched now, and the listeners hear of it once per flush.
      this.dirty = false;
      if (this.patcher.apply(changes)) this.host._schedule();
    }
    if (isPageAnswer(ev)) this.settlePage(ev, out.error);
    return out;
  }

  // Carries out the core's commands in order. A status command runs the
  // 'status' listeners, which may close the session (or break the core):
  // the commands after it are then of a generation that is over, and are
  // dropped (a socket opened after close() would never be closed).
  run(commands) {
    const gen = this.gen;
    for (const cmd of commands) {
      if (this.gen !== gen || this.closed) return;
      switch (cmd.type) {
        case 'open_subscription':
          this.openSocket(cmd.session_id || this.host.sessionId);
          break;
        case 'close_subscription':
          this.closeSocket();
          break;
        case 'fetch_page':
          this.fetchPage(cmd);
          break;
        case 'set_timer':
          this.setTimer(cmd.timer_id, cmd.delay_ms ?? 0);
          break;
        case 'render':
          // What changed is taken from the core once per flush (flush()).
          this.host._schedule();
          break;
        case 'status':
          this.host._setStatus(cmd.status, cmd.reason);
          break;
        default:
          this.host._log('unknown command', cmd.type);
      }
    }
  }

  openSocket(sessionId) {
    this.closeSocket();
    if (this.closed) return;
    const gen = this.gen;
    // kept=1: the core takes texts without the beginning it was sent (§4.5);
    // signals=1: the server's signals come as text messages (§4.6).
    let url = `${this.wsBase}${sessionPath(sessionId, '/subscribe')}?kept=1&signals=1`;
    const token = this.http.token;
    if (token) url += `&token=${encodeURIComponent(token)}`;
    let ws;
    try {
      ws = new this.WebSocket(url);
    } catch (err) {
      queueMicrotask(() => this.lost(gen, null, `open failed: ${err?.message ?? err}`));
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    let opened = false;
    const current = () => this.gen === gen && this.ws === ws;
    ws.onopen = () => {
      opened = true;
      if (current()) this.dispatch({ type: 'subscription_opened' });
    };
    // The handlers are one-line closures over this socket; the work is in
    // methods shared by every session, so the code V8 optimizes for it is
    // not specialised to one session (with the body inline, --trace-deopt
    // showed the hot path deoptimized when a session was collected).
    ws.onmessage = (e) => this.onMessage(gen, ws, e.data);
    // A socket refused before it opened tells nothing in a browser (no
    // status, no body): an HTTP probe of the same session says why.
    ws.onerror = () => (opened ? this.lost(gen, ws, 'websocket error') : this.refused(gen, ws, sessionId, token));
    ws.onclose = (e) => (opened ? this.lost(gen, ws, `websocket closed (${e?.code ?? ''}${e?.reason ? ` ${e.reason}` : ''})`) : this.refused(gen, ws, sessionId, token));
  }

  /**
   * A socket that failed before it opened: a one-message page read of the
   * same session tells a session that is gone (not_found) or a refused
   * token (unauthorized, once the provider has no new one), which end the
   * session, from the network being down (code network) or a server
   * refusing for now, which the core backs off from. The cause goes into
   * the status's reason and Session.cause.
   */
  async refused(gen, ws, sessionId, token) {
    if (this.gen !== gen || this.ws !== ws) return;
    this.detach(ws);
    let cause = null;
    try {
      await this.http.msgpack(sessionPath(sessionId, '/messages?limit=1'));
      // The server answers: the socket failed for another reason (a proxy,
      // a token refreshed by the probe itself). Back off and retry.
      if (this.http.token !== token) cause = new AgentsyncError('unauthorized', 'the token was refused; a new one is in use', { retryable: true });
    } catch (err) {
      cause = err instanceof AgentsyncError ? err : new AgentsyncError(NETWORK, String(err?.message ?? err), { retryable: true });
    }
    if (this.gen !== gen || this.closed) return;
    if (cause && this.host._failed(cause)) return;
    this.dispatch({ type: 'connection_lost', error: cause ? cause.message : 'websocket refused', jitter: jitter() });
    if (cause?.code === 'unauthorized') this.reconnectNow(); // with the new token, at once
  }

  onMessage(gen, ws, d) {
    if (this.gen !== gen || this.ws !== ws) return;
    // A text message is a signal (§4.6): beside the frames, never numbered,
    // never seen by the core.
    if (typeof d === 'string') {
      this.host._signal(d);
      return;
    }
    // Frames come as binary messages; anything else is handed to the core
    // as bytes so that it reports it as malformed and resyncs.
    const bytes = d instanceof ArrayBuffer ? new Uint8Array(d) : d instanceof Uint8Array ? d : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : new TextEncoder().encode(String(d));
    this.dispatch(bytes);
  }

  lost(gen, ws, reason) {
    if (this.gen !== gen || (ws && this.ws !== ws)) return;
    if (ws) this.detach(ws);
    this.dispatch({ type: 'connection_lost', error: reason, jitter: jitter() });
  }

  detach(ws) {
    ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
    if (this.ws === ws) this.ws = null;
  }

  closeSocket() {
    const ws = this.ws;
    if (!ws) return;
    this.detach(ws);
    try {
      ws.close(1000);
    } catch {
      // already closed
    }
  }

  /** The socket fails as a network failure would (Session.dropConnection). */
  dropConnection() {
    const ws = this.ws;
    if (!ws) return false;
    this.detach(ws);
    try {
      ws.close();
    } catch {
      // already closing
    }
    this.dispatch({ type: 'connection_lost', error: 'connection dropped', jitter: jitter() });
    return true;
  }

  async fetchPage(cmd) {
    const gen = this.gen;
    const id = cmd.request_id;
    const params = { limit: cmd.limit || undefined, before_sequence: cmd.before_sequence, include_internal: !!cmd.include_internal };
    const path = sessionPath(cmd.session_id || this.host.sessionId, `/messages${pageQuery(params)}`);
    let ev;
    try {
      // A cache answers the first head read with its window merged in (cache.js).
      const data = this.host.cache ? await this.host.cache.page(cmd, path) : await this.http.msgpack(path);
      ev = { type: 'page', request_id: id, data };
    } catch (err) {
      if (this.gen !== gen || this.closed) return;
      const e = err instanceof AgentsyncError ? err : new AgentsyncError(NETWORK, String(err?.message ?? err), { retryable: true });
      if (this.host._failed(e)) return;
      ev = { type: 'page_failed', request_id: id, error: e.message };
      // Not a field of the event (the core gets its fields): for its waiter.
      Object.defineProperty(ev, 'cause', { value: e });
    }
    if (this.gen === gen) this.dispatch(ev);
  }

  setTimer(timerId, delay) {
    if (this.closed) return;
    const gen = this.gen;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (this.gen === gen) this.dispatch({ type: 'timer_fired', timer_id: timerId });
    }, delay);
    this.timers.set(t, timerId);
  }

  /**
   * Fires the pending timers now when the session waits to reconnect
   * (status backoff): the core connects at once instead of at the end of
   * its backoff (Session.reconnect, the browser's online event).
   */
  reconnectNow() {
    if (this.closed || !this.core || this.host.status !== 'backoff') return false;
    const ids = [...this.timers.values()];
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
    for (const id of ids) this.dispatch({ type: 'timer_fired', timer_id: id });
    return ids.length > 0;
  }

  /**
   * Runs an event and, if the core asked for a page, waits for its
   * answer; rejects if the event or its page fails, or never will be
   * handled (closed, or the core rebuilt first). The Output comes by reply:
   * an event queued behind another (a call from a listener) is answered
   * when it is handled, not taken for "nothing to do".
   */
  request(ev) {
    return new Promise((resolve, reject) => {
      this.dispatch(ev, (out, err) => {
        if (err) {
          reject(err);
          return;
        }
        if (out === undefined) {
          // The host could not encode the event (reported as an 'error').
          reject(new AgentsyncError('bad_request', `${ev.type}: the core could not take the event`));
          return;
        }
        if (out.error) {
          reject(new AgentsyncError(out.error.code, out.error.message ?? ''));
          return;
        }
        const ids = out.commands.filter((c) => c.type === 'fetch_page').map((c) => c.request_id);
        const pages = ids.map((id) => new Promise((res, rej) => this.pageWaiters.set(id, { resolve: res, reject: rej })));
        Promise.all(pages).then(() => resolve(), reject);
      });
    });
  }

  settlePage(ev, error) {
    const w = this.pageWaiters.get(ev.request_id);
    if (!w) return;
    this.pageWaiters.delete(ev.request_id);
    if (ev.type === 'page_failed') w.reject(ev.cause ?? new AgentsyncError('internal', ev.error ?? 'page failed'));
    else if (error) w.reject(new AgentsyncError(error.code, error.message ?? ''));
    else w.resolve();
  }

  // Ends the current generation: its socket, timers and queued events go,
  // and whoever waits for one of them (or for a page) hears why.
  teardown(why) {
    this.gen++;
    this.closeSocket();
    for (const t of this.timers.keys()) clearTimeout(t);
    this.timers.clear();
    for (const ev of this.queue.splice(0)) this.reply(ev, undefined, why);
    for (const w of this.pageWaiters.values()) w.reject(why);
    this.pageWaiters.clear();
  }

  /** Stops for good: the core is told, then freed; nothing of it runs again. */
  close() {
    if (this.closed) return;
    if (this.core && !this.core.broken) this.dispatch({ type: 'close' });
    this.closed = true;
    this.teardown(new AgentsyncError('closed', 'session closed'));
    this.core?.free();
    this.core = null;
  }

  /**
   * After a trap or a core_broken error the instance is undefined: throw
   * it away, load a fresh one and re-read the snapshot (the server is the
   * authority, so nothing is lost to the caller). The status is
   * connecting until the new core is live; the old view's messages stay
   * on screen until the new one replaces them.
   */
  rebuild(reason) {
    if (this.closed || this.rebuilding) return;
    this.rebuilds++;
    this.host._log('rebuilding core after', reason);
    this.host._emit('rebuild', { reason });
    this.patcher.recovering = true;
    this.teardown(new AgentsyncError(CORE_BROKEN, `the core was rebuilt (${reason?.message ?? reason}); its requests are void`));
    this.core = null;
    this.rebuilding = (async () => {
      let delay = 100;
      while (!this.closed) {
        let core;
        try {
          core = await Core.load(this.module, this.coreOpts());
        } catch (err) {
          this.host._emit('error', err instanceof AgentsyncError ? err : new AgentsyncError('internal', String(err)));
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 30000);
          continue;
        }
        if (this.closed) {
          // Closed while it loaded: the core is nobody's.
          core.free();
          break;
        }
        this.core = core;
        break;
      }
      this.rebuilding = null;
      if (!this.closed) this.start();
    })();
    // Not live meanwhile: whoever waits for live waits for the new core.
    this.host._setStatus('connecting', 'rebuilding the core');
  }

  /** A broken patch (a message the view lacks): a host bug, so start over. */
  unknownMessage(id) {
    this.dirty = true;
    if (this.core) this.core.broken = true;
    this.rebuild(new AgentsyncError(CORE_BROKEN, `changes: patch of unknown message ${id}`));
  }

  /**
   * Brings the patcher's view up to date with what the core says changed
   * since the last take (core.changes()), for the events other than frames
   * (whose changes come with them). Returns whether the view changed.
   */
  flush() {
    const core = this.core;
    const p = this.patcher;
    if (!this.dirty && !p.statusBehind) return false;
    if (!core || core.broken) return p.restatus();
    let ch;
    try {
      ch = core.changes();
    } catch (err) {
      if (core.broken) this.rebuild(err);
      else this.host._emit('error', err);
      return false;
    } finally {
      this.dirty = false;
    }
    return p.apply(ch);
  }
}

// A page or page_failed event: the answer a request may wait for.
function isPageAnswer(ev) {
  return !(ev instanceof Uint8Array) && (ev.type === 'page' || ev.type === 'page_failed');
}
