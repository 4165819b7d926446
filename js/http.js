// The REST half of the host: JSON and msgpack requests with the bearer
// token, typed errors, and the idempotent retried post that send() makes.
// Every retry decision of the host is made in this file.

import { AgentsyncError, NETWORK } from './errors.js';
import { codeForStatus } from './errcodes.js';
import { decode } from './msgpack.js';

/**
 * The small REST client shared by Session, createSession and the session
 * functions. Every rejection is an AgentsyncError: a fetch that got no
 * answer is code 'network' (retryable: true, the fetch's error as cause).
 */
export class Http {
  /**
   * @param {string} url the server's base URL
   * @param {string | (() => string | Promise<string>)} [token] a bearer
   *   token, or a provider asked for the first one and again after the
   *   server refused the current one (401, 403)
   * @param {typeof fetch} [fetchImpl]
   */
  constructor(url, token, fetchImpl) {
    this.base = String(url).replace(/\/+$/, '');
    this.tokenSource = typeof token === 'function' ? token : null;
    /** The token in use: the static one, or the provider's last. */
    this.token = typeof token === 'function' ? undefined : token;
    this.tokenPromise = null; // a provider call under way, shared by its callers
    this.fetch = fetchImpl ?? globalThis.fetch.bind(globalThis);
  }

  /** The token option as given (a string or the provider), to build another Http with. */
  get tokenOption() {
    return this.tokenSource ?? this.token;
  }

  /** The token to send now (the provider's first one is fetched once). */
  async currentToken() {
    if (this.tokenSource && this.token === undefined) await this.askToken();
    return this.token;
  }

  // One provider call at a time; its answer becomes the current token.
  askToken() {
    this.tokenPromise ??= (async () => {
      try {
        const t = await this.tokenSource();
        if (typeof t !== 'string') throw new TypeError(`the token provider gave ${typeof t}, not a string`);
        this.token = t;
        return t;
      } catch (err) {
        throw err instanceof AgentsyncError ? err : new AgentsyncError('unauthorized', `token provider: ${err?.message ?? err}`, { cause: err });
      } finally {
        this.tokenPromise = null;
      }
    })();
    return this.tokenPromise;
  }

  /**
   * After the server refused `refused`: whether another token is current
   * now (one another request refreshed, or a new one from the provider).
   */
  async refresh(refused) {
    if (!this.tokenSource) return false;
    if (this.token !== undefined && this.token !== refused) return true;
    try {
      return (await this.askToken()) !== refused;
    } catch {
      return false;
    }
  }

  /** The headers of a request: extra, plus the bearer token if there is one. */
  headers(extra, token = this.token) {
    const h = { ...extra };
    if (token) h.Authorization = `Bearer ${token}`;
    return h;
  }

  /**
   * fetch with the bearer token; a 401 or 403 is sent once more if the
   * provider gives a new token; a fetch that rejects is a 'network' error.
   */
  async send(path, init) {
    for (let attempt = 0; ; attempt++) {
      const token = await this.currentToken();
      let res;
      try {
        res = await this.fetch(this.base + path, { ...init, headers: this.headers(init.headers, token) });
      } catch (err) {
        throw networkError(`${init.method ?? 'GET'} ${path}`, err);
      }
      if (attempt === 0 && (res.status === 401 || res.status === 403) && (await this.refresh(token))) continue;
      return res;
    }
  }

  /** One JSON request; resolves with the decoded answer (null for none), rejects with an AgentsyncError. */
  async json(method, path, body) {
    const res = await this.exchange(method, path, body);
    if (!res.ok) throw httpError(res.status, res.text);
    return parseJSON(res.text);
  }

  /**
   * json(), sent again (at most `retries` times) while the server refuses
   * it for now: 429 or 503 (RETRIED_STATUSES), after retryDelay. For an
   * answer or an action, which must not be sent twice: a network failure
   * (the request may have been served) is thrown, never retried.
   */
  async jsonRetried(method, path, body, retries = 3) {
    for (let attempt = 0; ; attempt++) {
      const res = await this.exchange(method, path, body);
      if (res.ok) return parseJSON(res.text);
      const delay = retryDelay(res, attempt);
      if (!RETRIED_STATUSES.has(res.status) || attempt >= retries || delay === Infinity) throw httpError(res.status, res.text);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /**
   * One JSON request whose error answer is returned, not thrown: the
   * retried post reads its status and Retry-After to decide whether to try
   * again.
   */
  async exchange(method, path, body, extraHeaders) {
    const init = { method, headers: { Accept: 'application/json', ...extraHeaders } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await this.send(path, init);
    let text;
    try {
      text = await res.text();
    } catch (err) {
      throw networkError(`read the answer of ${method} ${path}`, err);
    }
    return { ok: res.ok, status: res.status, headers: res.headers, text };
  }

  /** GET with Accept: application/msgpack; resolves with the raw body bytes. */
  async msgpack(path) {
    const res = await this.send(path, { headers: { Accept: 'application/msgpack' } });
    let bytes;
    try {
      bytes = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      throw networkError(`read the answer of GET ${path}`, err);
    }
    if (!res.ok) {
      let text;
      try {
        text = JSON.stringify(decode(bytes));
      } catch {
        text = new TextDecoder().decode(bytes);
      }
      throw httpError(res.status, text);
    }
    return bytes;
  }
}

/** The error of a request that got no answer: code 'network', retryable, the transport's error as cause. */
export function networkError(what, cause) {
  return new AgentsyncError(NETWORK, `${what}: ${cause?.message ?? cause}${cause?.cause?.code ? ` (${cause.cause.code})` : ''}`, { cause, retryable: true });
}

function parseJSON(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AgentsyncError('malformed', `answer is not JSON: ${err.message}`);
  }
}

/** The AgentsyncError of an HTTP error answer: its typed body's code, else the status's. */
export function httpError(status, text) {
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

/** The path of a session's resource: /v1/sessions/{id}, then rest. */
export function sessionPath(sessionId, rest = '') {
  return `/v1/sessions/${encodeURIComponent(sessionId)}${rest}`;
}

/** The query string of a page read (GET .../messages), '' for none. */
export function pageQuery({ limit, before_sequence, around_sequence, after_sequence, include_internal } = {}) {
  const q = new URLSearchParams();
  if (limit !== undefined && limit !== null) q.set('limit', String(limit));
  if (before_sequence) q.set('before_sequence', String(before_sequence));
  if (around_sequence) q.set('around_sequence', String(around_sequence));
  if (after_sequence) q.set('after_sequence', String(after_sequence));
  if (include_internal !== undefined) q.set('include_internal', include_internal ? 'true' : 'false');
  const s = q.toString();
  return s ? `?${s}` : '';
}

// The answers a post is tried again after: 429 rate_limited and 503 closed
// (the server is draining, or a forwarded post timed out: that one may have
// landed, which the Idempotency-Key makes safe).
const RETRIED_STATUSES = new Set([429, 503]);
const MAX_RETRY_DELAY_MS = 30000;

/**
 * How long to wait before attempt `attempt + 1`: the answer's Retry-After
 * in whole seconds (as the server sends it; an HTTP date, which it never
 * sends, gets the backoff), else 250 ms doubled per attempt (at most
 * MAX_RETRY_DELAY_MS). A Retry-After past MAX_RETRY_DELAY_MS is Infinity:
 * the caller hears the error at once rather than waiting on, unseen.
 */
export function retryDelay(res, attempt) {
  const after = res?.headers.get('Retry-After');
  if (after && /^\d+$/.test(after.trim())) {
    const ms = Number(after) * 1000;
    return ms > MAX_RETRY_DELAY_MS ? Infinity : ms;
  }
  return Math.min(250 * 2 ** attempt, MAX_RETRY_DELAY_MS);
}

/**
 * A key per post. randomUUID exists only in secure contexts (https,
 * localhost); getRandomValues everywhere, a page on a LAN address included.
 */
export function newIdempotencyKey() {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  return Array.from(c.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * POSTs body to path under one Idempotency-Key, tried again after a
 * network failure (the post may or may not have landed), a 429 or a 503,
 * at most `retries` times, after retryDelay. Any other error answer is
 * thrown at once. `wait(ms)` waits between attempts and resolves true if
 * the caller was closed meanwhile (then a 'closed' error is thrown).
 * @param {Http} http
 * @param {{key?: string, retries?: number, wait: (ms: number) => Promise<boolean>, what?: string}} opts
 */
export async function postIdempotent(http, path, body, { key = newIdempotencyKey(), retries = 3, wait, what = 'post' }) {
  // An empty key would post without one (and a retry could post twice).
  if (typeof key !== 'string' || key === '') throw new AgentsyncError('bad_request', `${what}: idempotencyKey must be a non-empty string`);
  if (!Number.isInteger(retries) || retries < 0) throw new AgentsyncError('bad_request', `${what}: retries must be an integer >= 0`);
  for (let attempt = 0; ; attempt++) {
    let res = null;
    let failure;
    try {
      res = await http.exchange('POST', path, body, { 'Idempotency-Key': key });
    } catch (err) {
      // fetch rejected (or the answer was cut off): the post may or may
      // not have been committed, which is what the key is for.
      failure = err;
    }
    if (res?.ok) return parseJSON(res.text);
    if (res) failure = httpError(res.status, res.text);
    const delay = retryDelay(res, attempt);
    if ((res && !RETRIED_STATUSES.has(res.status)) || attempt >= retries || delay === Infinity) throw failure;
    if (await wait(delay)) throw new AgentsyncError('closed', `${what}: session closed`);
  }
}
