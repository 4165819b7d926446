// Reads the answer of agentsync_handle_changes (ABI v3, docs/protocol.md
// §7.4): two msgpack values, the Output (nil: it only said to render one
// message) then the changes: the Changes map, nil for a broken client, or
// the flat appends form that almost every delta gets,
//
//   [status, total, flags, next_before_sequence, id₁, index₁, text₁, ...]
//
// which is read here by hand, straight from the module's memory: a delta
// then costs no generic decode, and the ids and status it repeats are not
// rebuilt as new strings each time.

import { MsgpackError, decode, decodeFirst } from './msgpack.js';

const utf8 = new TextDecoder();

// The appends form's flag bits (synccore.AppendsHasMoreOlder, ...).
const HAS_MORE_OLDER = 1;
const LOADING_OLDER = 2;
const INCLUDE_INTERNAL = 4;

/** The Output of a delta: nothing to carry out beyond taking the changes. */
export const RENDER_ONLY = Object.freeze({ commands: Object.freeze([]) });

/**
 * Reads the result bytes u8[start, end).
 * @returns {{out: object, changes: object|null}} changes is null for a broken
 * client; in the appends form it has the Changes' scalar fields and
 * `appends`, a flat [id, index, text, ...] list, in place of `messages`.
 */
export function readHandleChanges(r, u8, start, end) {
  let p = start;
  let out = RENDER_ONLY;
  if (u8[p] === 0xc0) {
    p++;
  } else {
    const [o, n] = decodeFirst(u8.subarray(p, end));
    out = o;
    p += n;
  }
  // No changes: the client is broken, or (the Output alone) the handle unknown.
  if (p === end || (u8[p] === 0xc0 && p + 1 === end)) return { out, changes: null };
  const b = u8[p];
  if ((b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd) return { out, changes: r.appends(u8, p, end) };
  return { out, changes: decode(u8.subarray(p, end)) };
}

/**
 * Reads the appends form. It keeps the last status and message id it
 * built, and hands them out again while their bytes repeat.
 */
export class AppendsReader {
  constructor() {
    this.status = '';
    this.id = '';
  }

  appends(u8, p, end) {
    this.u8 = u8;
    this.p = p;
    this.end = end;
    const b = this.byte();
    const n = b <= 0x9f ? b & 0x0f : b === 0xdc ? this.uint(2) : this.uint(4);
    if (n < 4 || (n - 4) % 3 !== 0) throw new MsgpackError(`appends: ${n} values, not 4+3k`);
    this.status = this.cachedStr(this.status);
    const total = this.int();
    const flags = this.int();
    const next = this.int();
    const appends = new Array(n - 4);
    for (let k = 0; k < n - 4; k += 3) {
      appends[k] = this.id = this.cachedStr(this.id);
      appends[k + 1] = this.int();
      appends[k + 2] = this.str();
    }
    if (this.p !== end) throw new MsgpackError(`appends: ${end - this.p} trailing bytes`);
    const ch = {
      status: this.status,
      total,
      has_more_older: (flags & HAS_MORE_OLDER) !== 0,
      loading_older: (flags & LOADING_OLDER) !== 0,
      include_internal: (flags & INCLUDE_INTERNAL) !== 0,
      appends,
    };
    if (next !== 0) ch.next_before_sequence = next;
    return ch;
  }

  byte() {
    if (this.p >= this.end) throw new MsgpackError('appends: truncated');
    return this.u8[this.p++];
  }

  uint(k) {
    if (this.p + k > this.end) throw new MsgpackError('appends: truncated');
    let v = 0;
    for (let i = 0; i < k; i++) v = v * 256 + this.u8[this.p++];
    return v;
  }

  int() {
    const b = this.byte();
    if (b < 0x80) return b;
    if (b >= 0xe0) return b - 0x100;
    switch (b) {
      case 0xcc:
        return this.uint(1);
      case 0xcd:
        return this.uint(2);
      case 0xce:
        return this.uint(4);
      case 0xcf:
        return this.uint(8);
      case 0xd0:
        return (this.uint(1) << 24) >> 24;
      case 0xd1:
        return (this.uint(2) << 16) >> 16;
      case 0xd2:
        return this.uint(4) | 0;
      default:
        throw new MsgpackError(`appends: 0x${b.toString(16)} is not an int`);
    }
  }

  // The length of the string whose header comes next.
  strLen() {
    const b = this.byte();
    if (b >= 0xa0 && b <= 0xbf) return b & 0x1f;
    if (b === 0xd9) return this.uint(1);
    if (b === 0xda) return this.uint(2);
    if (b === 0xdb) return this.uint(4);
    throw new MsgpackError(`appends: 0x${b.toString(16)} is not a string`);
  }

  str() {
    const n = this.strLen();
    const s = this.p;
    if (s + n > this.end) throw new MsgpackError('appends: truncated string');
    this.p += n;
    return utf8Text(this.u8, s, n);
  }

  // The next string, or prev itself when its bytes spell prev (ASCII).
  cachedStr(prev) {
    const save = this.p;
    const n = this.strLen();
    if (n === prev.length && this.p + n <= this.end) {
      const u8 = this.u8;
      let same = true;
      for (let i = 0; i < n; i++) {
        if (u8[this.p + i] !== prev.charCodeAt(i)) {
          same = false;
          break;
        }
      }
      if (same) {
        this.p += n;
        return prev;
      }
    }
    this.p = save;
    return this.str();
  }
}

/** The UTF-8 bytes u8[s, s+n) as a string. */
export function utf8Text(u8, s, n) {
  if (n > 24) return utf8.decode(u8.subarray(s, s + n));
  // A delta's text is a few bytes: built by hand, as TextDecoder's call
  // costs more than the bytes; anything not ASCII goes to the decoder.
  for (let i = s; i < s + n; i++) {
    if (u8[i] >= 0x80) return utf8.decode(u8.subarray(s, s + n));
  }
  return ascii(u8, s, n);
}

// The ASCII bytes u8[s, s+n) as a string, eight characters per
// String.fromCharCode call with its arguments spelled out: a quarter of the
// cost of a call per character, or of fromCharCode.apply over a subarray.
function ascii(u8, s, n) {
  let out = '';
  let i = s;
  for (; i + 8 <= s + n; i += 8) {
    out += String.fromCharCode(u8[i], u8[i + 1], u8[i + 2], u8[i + 3], u8[i + 4], u8[i + 5], u8[i + 6], u8[i + 7]);
  }
  for (; i < s + n; i++) out += String.fromCharCode(u8[i]);
  return out;
}
