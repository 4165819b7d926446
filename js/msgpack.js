// A small msgpack codec, so the package runs unbundled with no dependency.
//
// It covers what the agentsync protocol uses: maps (string keys), arrays,
// strings, bin, ints, floats, bool and nil. Ints are written in their
// smallest form (the server and the Go core do the same), bin decodes to a
// Uint8Array, and an int outside the safe range decodes to a BigInt rather
// than being rounded.

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/** A msgpack value that does not decode, or that cannot be encoded. */
export class MsgpackError extends Error {
  constructor(message) {
    super(message);
    this.name = 'MsgpackError';
  }
}

/** An ext value other than the timestamp (type -1). */
export class Ext {
  constructor(type, data) {
    this.type = type;
    this.data = data;
  }
}

// ---------------------------------------------------------------- encoding

class Writer {
  constructor(size = 256) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
  }

  ensure(n) {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(b) {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  u8u8(a, b) {
    this.ensure(2);
    this.buf[this.pos++] = a;
    this.buf[this.pos++] = b;
  }

  u8u16(a, b) {
    this.ensure(3);
    this.buf[this.pos++] = a;
    this.view.setUint16(this.pos, b);
    this.pos += 2;
  }

  u8u32(a, b) {
    this.ensure(5);
    this.buf[this.pos++] = a;
    this.view.setUint32(this.pos, b);
    this.pos += 4;
  }

  bytes(b) {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
}

function writeInt(w, n) {
  if (n >= 0) {
    if (n < 0x80) w.u8(n);
    else if (n < 0x100) w.u8u8(0xcc, n);
    else if (n < 0x10000) w.u8u16(0xcd, n);
    else if (n < 0x100000000) w.u8u32(0xce, n);
    else writeBigInt(w, BigInt(n));
  } else {
    if (n >= -32) w.u8(n & 0xff);
    else if (n >= -0x80) w.u8u8(0xd0, n & 0xff);
    else if (n >= -0x8000) w.u8u16(0xd1, n & 0xffff);
    else if (n >= -0x80000000) w.u8u32(0xd2, n >>> 0);
    else writeBigInt(w, BigInt(n));
  }
}

function writeBigInt(w, n) {
  if (n >= -0x80000000n && n < 0x100000000n) {
    writeInt(w, Number(n));
    return;
  }
  w.ensure(9);
  if (n >= 0n) {
    if (n > 0xffffffffffffffffn) throw new MsgpackError(`integer ${n} overflows uint64`);
    w.buf[w.pos++] = 0xcf;
    w.view.setBigUint64(w.pos, n);
  } else {
    if (n < -0x8000000000000000n) throw new MsgpackError(`integer ${n} overflows int64`);
    w.buf[w.pos++] = 0xd3;
    w.view.setBigInt64(w.pos, n);
  }
  w.pos += 8;
}

function writeString(w, s) {
  // Worst case 3 bytes per UTF-16 unit; encodeInto writes in place.
  const max = s.length * 3;
  w.ensure(5 + max);
  const start = w.pos;
  const head = max < 32 ? 1 : max < 0x100 ? 2 : max < 0x10000 ? 3 : 5;
  const { written } = utf8Encoder.encodeInto(s, w.buf.subarray(start + head));
  // Use the smallest header for the real length; move the bytes if the
  // header we reserved was larger.
  const real = written < 32 ? 1 : written < 0x100 ? 2 : written < 0x10000 ? 3 : 5;
  if (real !== head) w.buf.copyWithin(start + real, start + head, start + head + written);
  if (real === 1) w.buf[start] = 0xa0 | written;
  else if (real === 2) {
    w.buf[start] = 0xd9;
    w.buf[start + 1] = written;
  } else if (real === 3) {
    w.buf[start] = 0xda;
    w.view.setUint16(start + 1, written);
  } else {
    w.buf[start] = 0xdb;
    w.view.setUint32(start + 1, written);
  }
  w.pos = start + real + written;
}

function writeBin(w, b) {
  const n = b.length;
  if (n < 0x100) w.u8u8(0xc4, n);
  else if (n < 0x10000) w.u8u16(0xc5, n);
  else w.u8u32(0xc6, n);
  w.bytes(b);
}

function writeArrayHeader(w, n) {
  if (n < 16) w.u8(0x90 | n);
  else if (n < 0x10000) w.u8u16(0xdc, n);
  else w.u8u32(0xdd, n);
}

function writeMapHeader(w, n) {
  if (n < 16) w.u8(0x80 | n);
  else if (n < 0x10000) w.u8u16(0xde, n);
  else w.u8u32(0xdf, n);
}

function writeValue(w, v, depth) {
  if (depth > 512) throw new MsgpackError('value nested too deeply');
  switch (typeof v) {
    case 'string':
      writeString(w, v);
      return;
    case 'number':
      if (Number.isInteger(v)) {
        if (Object.is(v, -0)) {
          w.u8(0);
        } else if (Number.isSafeInteger(v)) {
          writeInt(w, v);
        } else {
          writeFloat(w, v);
        }
      } else {
        writeFloat(w, v);
      }
      return;
    case 'boolean':
      w.u8(v ? 0xc3 : 0xc2);
      return;
    case 'bigint':
      writeBigInt(w, v);
      return;
    case 'undefined':
      w.u8(0xc0);
      return;
    case 'object':
      break;
    default:
      throw new MsgpackError(`cannot encode a ${typeof v}`);
  }
  if (v === null) {
    w.u8(0xc0);
  } else if (v instanceof Uint8Array) {
    writeBin(w, v);
  } else if (v instanceof ArrayBuffer) {
    writeBin(w, new Uint8Array(v));
  } else if (ArrayBuffer.isView(v)) {
    writeBin(w, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  } else if (Array.isArray(v)) {
    writeArrayHeader(w, v.length);
    for (const item of v) writeValue(w, item, depth + 1);
  } else if (v instanceof Map) {
    writeMapHeader(w, v.size);
    for (const [k, item] of v) {
      writeValue(w, k, depth + 1);
      writeValue(w, item, depth + 1);
    }
  } else if (v instanceof Date) {
    writeInt(w, v.getTime());
  } else if (v instanceof Ext) {
    writeExt(w, v);
  } else {
    // A plain object: undefined fields are absent, as omitempty would do.
    const keys = Object.keys(v).filter((k) => v[k] !== undefined);
    writeMapHeader(w, keys.length);
    for (const k of keys) {
      writeString(w, k);
      writeValue(w, v[k], depth + 1);
    }
  }
}

function writeFloat(w, v) {
  w.ensure(9);
  w.buf[w.pos++] = 0xcb;
  w.view.setFloat64(w.pos, v);
  w.pos += 8;
}

function writeExt(w, e) {
  const n = e.data.length;
  const fixed = { 1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8 }[n];
  if (fixed) w.u8(fixed);
  else if (n < 0x100) w.u8u8(0xc7, n);
  else if (n < 0x10000) w.u8u16(0xc8, n);
  else w.u8u32(0xc9, n);
  w.u8(e.type & 0xff);
  w.bytes(e.data);
}

// One scratch writer, reused between calls. A getter could re-enter
// encode(): the inner call then gets a writer of its own. A buffer that
// grew past 1 MiB is dropped afterwards.
let scratch = new Writer(4096);
let busy = false;

/** Encodes value as msgpack; ints take their smallest form. */
export function encode(value) {
  if (busy) {
    const own = new Writer();
    writeValue(own, value, 0);
    return own.buf.slice(0, own.pos);
  }
  busy = true;
  const w = scratch;
  w.pos = 0;
  try {
    writeValue(w, value, 0);
    return w.buf.slice(0, w.pos);
  } finally {
    busy = false;
    if (w.buf.length > 1 << 20) scratch = new Writer(4096);
  }
}

// ---------------------------------------------------------------- decoding

class Reader {
  constructor(bytes) {
    this.buf = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
  }

  need(n) {
    if (this.pos + n > this.buf.length) {
      throw new MsgpackError(`truncated msgpack: need ${n} bytes at offset ${this.pos} of ${this.buf.length}`);
    }
  }

  // Big-endian fixed-width reads that check the bounds and advance.
  u8() {
    this.need(1);
    return this.buf[this.pos++];
  }

  u16() {
    this.need(2);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }

  u32() {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  fixed(n, get) {
    this.need(n);
    const v = get.call(this.view, this.pos);
    this.pos += n;
    return v;
  }
}

// Short strings are decoded by hand: TextDecoder's call cost dominates below
// a few dozen bytes (ids, keys, enum values).
function readUtf8(r, n) {
  r.need(n);
  const buf = r.buf;
  const start = r.pos;
  r.pos += n;
  if (n > 32) return utf8Decoder.decode(buf.subarray(start, start + n));
  // Short ASCII strings (keys, ids, a delta's text) are most of what a
  // host decodes: one fromCharCode call builds each without concatenation.
  for (let i = start; i < start + n; i++) {
    if (buf[i] >= 0x80) return utf8Decoder.decode(buf.subarray(start, start + n));
  }
  return String.fromCharCode.apply(null, buf.subarray(start, start + n));
}

function readBin(r, n) {
  r.need(n);
  const out = r.buf.slice(r.pos, r.pos + n);
  r.pos += n;
  return out;
}

function u64(r, signed) {
  r.need(8);
  const big = signed ? r.view.getBigInt64(r.pos) : r.view.getBigUint64(r.pos);
  r.pos += 8;
  if (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(big);
  return big;
}

function readArray(r, n, depth) {
  // Every element takes at least one byte: a header that promises more
  // elements than bytes left is malformed, not a reason to allocate.
  if (n > r.buf.length - r.pos) throw new MsgpackError(`array of ${n} items exceeds the input`);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = readValue(r, depth + 1);
  return out;
}

function readMap(r, n, depth) {
  if (n * 2 > r.buf.length - r.pos) throw new MsgpackError(`map of ${n} entries exceeds the input`);
  const out = {};
  for (let i = 0; i < n; i++) {
    let k = readKey(r, depth);
    if (typeof k !== 'string') {
      if (typeof k === 'number' || typeof k === 'bigint' || typeof k === 'boolean') k = String(k);
      else throw new MsgpackError('map key is not a string or number');
    }
    const v = readValue(r, depth + 1);
    if (k === '__proto__') {
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    } else {
      out[k] = v;
    }
  }
  return out;
}

// Map keys are a few dozen short ASCII names over and over (every field of
// every frame, view and change): they are looked up by their bytes in a
// small cache instead of being built as new strings each time.
const keyCache = new Map();

function readKey(r, depth) {
  const buf = r.buf;
  const b = buf[r.pos];
  const n = b - 0xa0;
  if (n < 1 || n > 24 || r.pos + 1 + n > buf.length) return readValue(r, depth + 1);
  const start = r.pos + 1;
  let h = n;
  for (let i = start; i < start + n; i++) {
    const c = buf[i];
    if (c >= 0x80) return readValue(r, depth + 1);
    h = (Math.imul(h, 31) + c) | 0;
  }
  const hit = keyCache.get(h);
  if (hit !== undefined && hit.length === n) {
    let same = true;
    for (let i = 0; i < n; i++) {
      if (hit.charCodeAt(i) !== buf[start + i]) {
        same = false;
        break;
      }
    }
    if (same) {
      r.pos = start + n;
      return hit;
    }
  }
  const k = String.fromCharCode.apply(null, buf.subarray(start, start + n));
  if (keyCache.size < 4096) keyCache.set(h, k);
  r.pos = start + n;
  return k;
}

function readExt(r, n) {
  r.need(1 + n);
  const type = r.view.getInt8(r.pos);
  r.pos += 1;
  const data = r.buf.slice(r.pos, r.pos + n);
  r.pos += n;
  if (type === -1) return decodeTimestamp(data);
  return new Ext(type, data);
}

function decodeTimestamp(d) {
  const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
  if (d.length === 4) return new Date(v.getUint32(0) * 1000);
  if (d.length === 8) {
    const hi = v.getUint32(0);
    const lo = v.getUint32(4);
    const nsec = hi >>> 2;
    const sec = (hi & 0x3) * 0x100000000 + lo;
    return new Date(sec * 1000 + Math.floor(nsec / 1e6));
  }
  if (d.length === 12) {
    const nsec = v.getUint32(0);
    const sec = Number(v.getBigInt64(4));
    return new Date(sec * 1000 + Math.floor(nsec / 1e6));
  }
  throw new MsgpackError(`timestamp ext of ${d.length} bytes`);
}

function readValue(r, depth) {
  if (depth > 512) throw new MsgpackError('msgpack nested too deeply');
  r.need(1);
  const b = r.buf[r.pos++];
  if (b < 0x80) return b;
  if (b >= 0xe0) return b - 0x100;
  if (b >= 0xa0 && b <= 0xbf) return readUtf8(r, b & 0x1f);
  if (b >= 0x90 && b <= 0x9f) return readArray(r, b & 0x0f, depth);
  if (b >= 0x80 && b <= 0x8f) return readMap(r, b & 0x0f, depth);
  switch (b) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xc4:
      return readBin(r, r.u8());
    case 0xc5:
      return readBin(r, r.u16());
    case 0xc6:
      return readBin(r, r.u32());
    case 0xc7:
      return readExt(r, r.u8());
    case 0xc8:
      return readExt(r, r.u16());
    case 0xc9:
      return readExt(r, r.u32());
    case 0xca:
      return r.fixed(4, DataView.prototype.getFloat32);
    case 0xcb:
      return r.fixed(8, DataView.prototype.getFloat64);
    case 0xcc:
      return r.u8();
    case 0xcd:
      return r.u16();
    case 0xce:
      return r.u32();
    case 0xcf:
      return u64(r, false);
    case 0xd0:
      return r.fixed(1, DataView.prototype.getInt8);
    case 0xd1:
      return r.fixed(2, DataView.prototype.getInt16);
    case 0xd2:
      return r.fixed(4, DataView.prototype.getInt32);
    case 0xd3:
      return u64(r, true);
    case 0xd4:
      return readExt(r, 1);
    case 0xd5:
      return readExt(r, 2);
    case 0xd6:
      return readExt(r, 4);
    case 0xd7:
      return readExt(r, 8);
    case 0xd8:
      return readExt(r, 16);
    case 0xd9:
      return readUtf8(r, r.u8());
    case 0xda:
      return readUtf8(r, r.u16());
    case 0xdb:
      return readUtf8(r, r.u32());
    case 0xdc:
      return readArray(r, r.u16(), depth);
    case 0xdd:
      return readArray(r, r.u32(), depth);
    case 0xde:
      return readMap(r, r.u16(), depth);
    case 0xdf:
      return readMap(r, r.u32(), depth);
    default:
      throw new MsgpackError(`invalid msgpack byte 0x${b.toString(16)} at offset ${r.pos - 1}`);
  }
}

function toBytes(input) {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new MsgpackError('decode needs a Uint8Array, ArrayBuffer or typed array');
}

/** Decodes one msgpack value that must fill the whole input. */
export function decode(input) {
  const r = new Reader(toBytes(input));
  const v = readValue(r, 0);
  if (r.pos !== r.buf.length) {
    throw new MsgpackError(`${r.buf.length - r.pos} trailing bytes after the msgpack value`);
  }
  return v;
}

/**
 * Decodes the first msgpack value of the input, which may hold more:
 * returns [value, its length in bytes].
 */
export function decodeFirst(input) {
  const r = new Reader(toBytes(input));
  const v = readValue(r, 0);
  return [v, r.pos];
}
