// Core wraps one instance of the agentsync WebAssembly module (ABI version 4)
// holding one synccore.Client. See docs for the ABI: a host writes its input
// into a module-owned buffer from agentsync_alloc, calls an export, and reads
// a result packed as (ptr << 32) | len, valid until the next export call.

import { AppendsReader, RENDER_ONLY, readHandleChanges, utf8Text } from './changes.js';
import { AgentsyncError, CORE_BROKEN } from './errors.js';
import { decode, encode } from './msgpack.js';
import { defaultWasmSource, loadModule } from './load.js';
import { warmCore } from './warm.js';
import { Wasi } from './wasi.js';

export const ABI_VERSION = 4;

const utf8 = new TextEncoder();
const ascii = new TextDecoder();

// The error type and the rebuild code live in errors.js; exported here too
// for existing callers.
export { AgentsyncError, CORE_BROKEN } from './errors.js';

// Loading the module (fetch in browsers, files through the Node entry) lives
// in load.js; these names stay exported here for existing callers.
export { defaultWasmSource, defaultWasmURL, loadModule } from './load.js';

/**
 * One module instance and one client. Not safe for re-entrant use; every
 * call is synchronous. After a trap (a WebAssembly.RuntimeError) or a
 * `core_broken` error the instance must be discarded: see `broken`.
 */
export class Core {
  /**
   * @param {string|URL|Uint8Array|ArrayBuffer|WebAssembly.Module} [source]
   * @param {{stdout?: (s: string) => void, stderr?: (s: string) => void}} [opts]
   */
  static async load(source, opts = {}) {
    const module = await loadModule(source ?? (await defaultWasmSource()));
    const idle = IDLE.get(module);
    if (idle) {
      // A freed Core's instance, its client gone: a new client on it costs
      // no instantiation, and its memory is grown and warm already.
      IDLE.delete(module);
      idle.wasi.setOutput(opts);
      return new Core(idle.instance, module, idle.wasi);
    }
    const wasi = new Wasi(opts);
    const instance = await WebAssembly.instantiate(module, wasi.imports(module));
    wasi.setMemory(instance.exports.memory);
    try {
      instance.exports._initialize?.();
    } catch (err) {
      throw trapError(err);
    }
    return new Core(instance, module, wasi);
  }

  constructor(instance, module, wasi = null) {
    this.module = module;
    this.instance = instance;
    this.wasi = wasi;
    /** Set by free(): the instance may serve another Core now. */
    this.freed = false;
    this.x = instance.exports;
    this.memory = this.x.memory;
    /** Set once a call trapped or the module answered `core_broken`: discard this Core. */
    this.broken = false;
    this.u8 = null; // see mem8
    this.lastRaw = null; // see cachedOutput
    this.lastOut = null;
    this.framesPtr = 0; // see writeFrames
    this.framesHead = 0;
    // The instance's input buffer (inputBuffer), shared by every Core on
    // the instance: another's alloc (a warm-up's scratch client) replaces it.
    this.inbuf = inputState(instance);
    /** The message a compact answer appends to (handleCompact), or null. */
    this.compactId = null;
    /** The compact answer's part index and text (handleCompact). */
    this.compactIndex = 0;
    this.compactText = '';
    this.appendsReader = new AppendsReader();
    const v = this.call(() => this.x.agentsync_abi_version());
    if (v !== ABI_VERSION) {
      this.broken = true;
      throw new AgentsyncError('bad_request', `agentsync module ABI version ${v}, this host speaks ${ABI_VERSION}`);
    }
    this.h = this.call(() => this.x.agentsync_client_new());
    if (!(this.h > 0)) {
      this.broken = true;
      throw new AgentsyncError(CORE_BROKEN, `agentsync_client_new returned ${this.h}`);
    }
  }

  // Every export call goes through here: a trap (or a result that cannot be
  // read) leaves the instance undefined, so it is reported as core_broken.
  call(fn) {
    if (this.broken) throw brokenError();
    try {
      return fn();
    } catch (err) {
      this.broken = true;
      throw trapError(err);
    }
  }

  // Copies input into the module's buffer; valid until the next export call.
  input(bytes) {
    this.inbuf.prefixAt = -1;
    const ptr = this.inputBuffer(bytes.length);
    this.mem8().set(bytes, ptr);
    return ptr;
  }

  // A pointer to n bytes of the module's input buffer. Since ABI v4 the
  // buffer stays valid until the next agentsync_alloc, so a small one is
  // kept and written again without a call per input. A large input asks
  // every time, and so does the next input after it, which lets the
  // module replace its large buffer with a small one (§7.2).
  inputBuffer(n) {
    const st = this.inbuf;
    if (n <= st.cap) return st.ptr;
    const size = Math.max(n, MIN_INPUT);
    const ptr = this.x.agentsync_alloc(size);
    if (ptr === 0) throw new AgentsyncError(CORE_BROKEN, `agentsync_alloc(${size}) failed`);
    st.prefixAt = -1; // a new buffer holds no prefix
    st.ptr = ptr;
    st.cap = size <= KEPT_INPUT ? size : 0;
    return ptr;
  }

  // A Uint8Array over the whole memory, re-created only when memory.grow
  // detached the buffer it views (its length is then 0), checked after
  // every call: reading memory.buffer itself is a call into the engine.
  mem8() {
    if (this.u8 === null || this.u8.length === 0) this.u8 = new Uint8Array(this.memory.buffer);
    return this.u8;
  }

  // The bytes of a packed (ptr << 32) | len result, still in wasm memory:
  // decode or copy them before the next export call.
  result(packed) {
    PACKED[0] = packed;
    const ptr = PACKED32[PTR];
    return this.mem8().subarray(ptr, ptr + PACKED32[LEN]);
  }

  /**
   * Applies one event. Raw frame and page bytes go in `data` (Uint8Array).
   * @returns {{commands: object[], error?: {code: string, message: string}}}
   */
  handle(event) {
    const data = event.data;
    if (!(data instanceof Uint8Array) || data.length < 0x10000) return this.handleBytes(encode(event));
    // A page's bytes (a long answer: megabytes) go straight into wasm
    // memory behind the event's other fields, not through the encoder's
    // growing buffer: the same bytes as encode(event), one copy.
    const { data: _, ...fields } = event;
    const head = encode({ ...fields, data: null }); // data last, encoded as nil
    const out = this.call(() => {
      const n = data.length;
      const total = head.length - 1 + 5 + n;
      this.inbuf.prefixAt = -1;
      const ptr = this.inputBuffer(total);
      const mem = this.mem8();
      mem.set(head.subarray(0, head.length - 1), ptr);
      let p = ptr + head.length - 1;
      mem[p++] = 0xc6; // bin 32, as encode writes 64 KiB and more
      mem[p++] = n >>> 24;
      mem[p++] = (n >>> 16) & 0xff;
      mem[p++] = (n >>> 8) & 0xff;
      mem[p++] = n & 0xff;
      mem.set(data, p);
      return decodeOutput(this.result(this.x.agentsync_handle(this.h, ptr, total)));
    });
    return this.output(out);
  }

  /** handle() for an event already encoded as msgpack. */
  handleBytes(bytes) {
    const out = this.call(() => {
      const ptr = this.input(bytes);
      return decodeOutput(this.result(this.x.agentsync_handle(this.h, ptr, bytes.length)));
    });
    return this.output(out);
  }

  /**
   * The exact msgpack Output bytes for an encoded event (a copy), for
   * conformance checks that compare hosts byte for byte. Like handle(), a
   * `core_broken` error in it marks the core broken.
   */
  handleRaw(bytes) {
    const raw = this.call(() => {
      const ptr = this.input(bytes);
      return this.result(this.x.agentsync_handle(this.h, ptr, bytes.length)).slice();
    });
    if (raw.length > 0) this.output(decode(raw));
    return raw;
  }

  /**
   * One WebSocket binary message as a `frames` event, encoded straight
   * into wasm memory (no intermediate event object or copy).
   */
  handleFrames(data) {
    if (this.broken) throw brokenError();
    let res;
    // No closure on this path (see call()): it runs once per WebSocket message.
    try {
      const total = this.writeFrames(data);
      res = this.cachedOutput(this.result(this.x.agentsync_handle(this.h, this.framesPtr, total)));
    } catch (err) {
      this.broken = true;
      throw trapError(err);
    }
    return res;
  }

  /**
   * handleFrames and changes() in one call (ABI v3). Returns
   * {out, changes}: the Output, and what changed since the last take, or
   * null when the core is broken. The changes of a delta come in the
   * appends form (changes.js): the Changes' scalars and a flat `appends`
   * list [message_id, index, text, ...] in place of `messages`.
   */
  handleChanges(data) {
    return this.take(data, this.x.agentsync_handle_changes);
  }

  /**
   * handleChanges through agentsync_handle_compact (ABI v4, protocol
   * §7.4.2): returns COMPACT when the module answered a delta's take in
   * the result alone — `compactText` appended to part `compactIndex` of
   * the message `compactId` (the last take's only append), nothing else
   * changed — and handleChanges' answer otherwise.
   */
  handleCompact(data) {
    return this.take(data, this.x.agentsync_handle_compact);
  }

  // handleChanges and handleCompact through the export given (only
  // agentsync_handle_compact answers compact).
  take(data, exported) {
    if (this.broken) throw brokenError();
    let res;
    try {
      const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
      const total = this.writeFrames(bytes);
      // The packed i64 is split through a typed array: BigInt arithmetic
      // allocates a BigInt per operation, which costs more than the delta.
      PACKED[0] = exported(this.h, this.framesPtr, total);
      if (PACKED32[PTR] === 0 && PACKED32[LEN] !== 0) {
        if (this.compactId === null) throw new Error('compact answer without a previous append');
        const v = PACKED32[LEN];
        this.compactIndex = v >>> 16;
        // The text runs from its offset in the event to the end; the event
        // is the frames prefix, then the bytes as they came.
        const at = (v & 0xffff) - this.framesHead;
        this.compactText = utf8Text(bytes, at, bytes.length - at);
        return COMPACT;
      }
      res = this.readChanges();
    } catch (err) {
      this.broken = true;
      throw trapError(err);
    }
    if (res.out !== RENDER_ONLY) res.out = this.output(res.out);
    return res;
  }

  // Reads the packed answer of handle_changes/handle_compact in PACKED,
  // and notes which message a compact answer would append to: the only
  // append of a take in the appends form with a render-only Output, as
  // the module does (synccore.Client.noteCompactTarget).
  readChanges() {
    const ptr = PACKED32[PTR];
    const res = readHandleChanges(this.appendsReader, this.mem8(), ptr, ptr + PACKED32[LEN]);
    const a = res.changes?.appends;
    this.compactId = res.out === RENDER_ONLY && a !== undefined && a.length === 3 ? a[0] : null;
    return res;
  }

  // Writes data as an encoded `frames` event into the module's input
  // buffer (at this.framesPtr) and returns its length.
  writeFrames(data) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    const n = bytes.length;
    const binHead = n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    const total = FRAMES_PREFIX.length + binHead + n;
    const ptr = this.inputBuffer(total);
    this.framesPtr = ptr;
    this.framesHead = FRAMES_PREFIX.length + binHead;
    const mem = this.mem8();
    // The module only reads its input: the prefix written for the last
    // message is still there unless another input overwrote it.
    if (this.inbuf.prefixAt !== ptr) {
      mem.set(FRAMES_PREFIX, ptr);
      this.inbuf.prefixAt = ptr;
    }
    let p = ptr + FRAMES_PREFIX.length;
    if (binHead === 2) {
      mem[p++] = 0xc4;
      mem[p++] = n;
    } else if (binHead === 3) {
      mem[p++] = 0xc5;
      mem[p++] = n >>> 8;
      mem[p++] = n & 0xff;
    } else {
      mem[p++] = 0xc6;
      mem[p++] = n >>> 24;
      mem[p++] = (n >>> 16) & 0xff;
      mem[p++] = (n >>> 8) & 0xff;
      mem[p++] = n & 0xff;
    }
    mem.set(bytes, p);
    return total;
  }

  // Consecutive deltas of one stream get byte-identical Outputs (a render
  // of the same message): the decoded answer of the last small Output is
  // reused when the bytes match, so the steady state decodes nothing.
  // Callers must not mutate a returned Output.
  cachedOutput(raw) {
    const last = this.lastRaw;
    const n = raw.length;
    if (last !== null && last.length === n) {
      let same = true;
      for (let i = 0; i < n; i++) {
        if (raw[i] !== last[i]) {
          same = false;
          break;
        }
      }
      if (same) return this.lastOut;
    }
    const out = this.output(decodeOutput(raw));
    if (n <= 256 && !out.error) {
      this.lastRaw = raw.slice();
      this.lastOut = deepFreeze(out);
    }
    return out;
  }

  output(out) {
    const res = { commands: out?.commands ?? [] };
    // The code alone decides (ABI v1 and v2): a recovered panic answers
    // core_broken and leaves the client broken. Any other code, internal
    // from a server's error frame included, is reported and the client is
    // fine (its commands resync).
    if (out?.error?.code === CORE_BROKEN) this.broken = true;
    if (out?.error) {
      res.error = out.error;
    }
    return res;
  }

  /** The whole view, decoded (O(size of the view): not for every delta). */
  view() {
    return this.checked(this.call(() => decode(this.result(this.x.agentsync_view(this.h)))));
  }

  // view, message and digest answer with an Output carrying the error when
  // the handle is unknown or the client broken: turn it into an exception.
  checked(v) {
    if (v && typeof v === 'object' && v.error && typeof v.error.code === 'string' && 'commands' in v) {
      if (v.error.code === CORE_BROKEN) this.broken = true;
      throw new AgentsyncError(v.error.code, v.error.message ?? '');
    }
    return v;
  }

  /** One message of the view with projections merged, or null if absent. */
  message(id) {
    const bytes = utf8.encode(id);
    const msg = this.call(() => {
      const ptr = this.input(bytes);
      const r = this.result(this.x.agentsync_message(this.h, ptr, bytes.length));
      return r.length === 0 ? null : decode(r);
    });
    return this.checked(msg);
  }

  /**
   * What changed in the view since the previous call (ABI v2+, protocol
   * §7.4): whole messages and parts, and text appended to held parts.
   */
  changes() {
    this.compactId = null; // as the module forgets it at any other take
    return this.checked(this.call(() => decode(this.result(this.x.agentsync_changes(this.h)))));
  }

  /** The view digest (hex SHA-256 of the canonical encoding of its messages). */
  digest() {
    const r = this.call(() => {
      const b = this.result(this.x.agentsync_digest(this.h));
      // A hex digest is ASCII; a first byte that is a msgpack map is an error Output.
      return b.length > 0 && b[0] >= 0x80 ? decode(b) : ascii.decode(b);
    });
    return this.checked(r);
  }

  /**
   * Warms this Core's instance for a long answer while the app is idle
   * (warm.js): a synthetic answer of `bytes` bytes (1 MiB unless told)
   * streams through a scratch client of the same instance, one WebSocket
   * message's worth of frames per macrotask, and is freed. This Core may
   * be used meanwhile. A trap in the scratch client leaves the instance
   * undefined, so this Core is broken too (and a session rebuilds it).
   * An instance is warmed once: a pooled one (free) comes warm.
   * @param {{bytes?: number, pause?: () => Promise<void>}} [opts]
   */
  async warm(opts = {}) {
    if (this.broken) throw brokenError();
    if (WARMED.has(this.instance)) return;
    WARMED.add(this.instance);
    const scratch = new Core(this.instance, this.module, null);
    try {
      await warmCore(scratch, opts);
    } catch (err) {
      if (scratch.broken) this.broken = true;
      throw err;
    } finally {
      scratch.free();
    }
  }

  /**
   * Drops the client; this Core answers nothing after it. A healthy
   * instance (Core.load made it) is kept for the next Core.load of the
   * same module, unless one is kept already or its memory grew past
   * IDLE_MAX_MEMORY: a page that moves between sessions then pays no new
   * instance and no cold memory per session.
   */
  free() {
    if (this.freed) return;
    this.freed = true;
    if (this.broken || this.h === 0) return;
    this.broken = true; // no call from this Core reaches the instance again
    try {
      this.x.agentsync_client_free(this.h);
    } catch {
      return;
    }
    this.h = 0;
    if (this.wasi !== null && !IDLE.has(this.module) && this.memory.buffer.byteLength <= IDLE_MAX_MEMORY) {
      IDLE.set(this.module, this);
    }
  }
}

// The error of every call on a Core already known to be broken (or freed).
function brokenError() {
  return new AgentsyncError(CORE_BROKEN, 'this core instance is broken or freed; rebuild it');
}

// A trap (a WebAssembly.RuntimeError) or any failure inside an export call.
function trapError(err) {
  if (err instanceof AgentsyncError && err.code === CORE_BROKEN) return err;
  return new AgentsyncError(CORE_BROKEN, `wasm trap: ${err?.message ?? err}`, { cause: err });
}

function deepFreeze(v) {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze(v[k]);
  }
  return v;
}

// An empty result is an Output with no command.
function decodeOutput(bytes) {
  return bytes.length === 0 ? { commands: [] } : decode(bytes);
}

// The scratch that splits a packed (ptr << 32) | len result into its
// halves, in the platform's byte order.
const PACKED = new BigUint64Array(1);
const PACKED32 = new Uint32Array(PACKED.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LEN = LITTLE_ENDIAN ? 0 : 1;
const PTR = LITTLE_ENDIAN ? 1 : 0;

// One idle instance per module (a WeakMap: a module let go takes its idle
// instance along), kept by Core.free while its memory is at most
// IDLE_MAX_MEMORY. The freed Core is kept, not only its instance: V8 lets
// the hidden classes of Core objects go once no Core is alive, and with
// them the code it optimized for them, so the next session's first
// deltas ran unoptimized again (10,000 deltas with a listener and 200
// messages, after a full collection: 2.5-3.8 us a delta, 1.5-1.7 with the
// freed Core kept; js/bench/e2e.bench.js).
const IDLE = new WeakMap();
const IDLE_MAX_MEMORY = 64 * 1024 * 1024;

// The instances warm() warmed or is warming.
const WARMED = new WeakSet();

// Each instance's input buffer: where it is (ptr), how much of it may be
// written again without a new agentsync_alloc (cap, 0 for a large one), and
// where FRAMES_PREFIX was last written into it while nothing else was.
const INPUTS = new WeakMap();

function inputState(instance) {
  let st = INPUTS.get(instance);
  if (st === undefined) INPUTS.set(instance, (st = { ptr: 0, cap: 0, prefixAt: -1 }));
  return st;
}

/** handleCompact's answer for a delta taken in the result alone. */
export const COMPACT = Object.freeze({ compact: true });

// Inputs up to KEPT_INPUT bytes reuse one alloc buffer of at least
// MIN_INPUT (inputBuffer).
const MIN_INPUT = 4096;
const KEPT_INPUT = 64 * 1024;

// {"type": "frames", "data": <bin follows>}
const FRAMES_PREFIX = encode({ type: 'frames', data: null }).slice(0, -1);
