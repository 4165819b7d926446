// The kit's error type and the one code that means "rebuild the core". A
// module of its own so that every other module can throw them without
// importing core.js (load.js did, and core.js imports load.js: a cycle).

/**
 * The error code of a broken core: the module recovered a panic (its
 * Output error, and every later call on that client, carry it) or the host
 * saw a trap. Only this code means "discard the Core and rebuild"; every
 * other code, `internal` from a server's error frame included, leaves the
 * Core in use. See docs/protocol.md §7.
 */
export const CORE_BROKEN = 'core_broken';

/**
 * The code of a request or a socket that got no answer from the server
 * (refused, cut, a name that does not resolve): never sent by a server,
 * always retryable.
 */
export const NETWORK = 'network';

/** The codes after which the same request can never succeed as it is: the session is gone, or who asks is refused. */
export const TERMINAL_CODES = new Set(['not_found', 'unauthorized', 'forbidden']);

/** The codes after which trying again later may succeed. */
const RETRYABLE_CODES = new Set([NETWORK, 'rate_limited', 'closed', 'timeout', 'internal']);

/** A typed error of the kit: the same codes as synccore/errors.go and the server. */
export class AgentsyncError extends Error {
  constructor(code, message, extra = {}) {
    super(`${code}: ${message}`);
    this.name = 'AgentsyncError';
    this.code = code;
    this.detail = message;
    /** Whether trying the same thing again later may succeed. */
    this.retryable = RETRYABLE_CODES.has(code);
    Object.assign(this, extra);
  }
}
