// The codec against byte vectors of the msgpack spec (the forms Go's
// msgpack/v5 writes with compact ints), round trips and malformed input.

import assert from 'node:assert/strict';
import { test } from './harness/timed.js';
import { decode, encode, MsgpackError } from '../msgpack.js';

const hex = (b) => Buffer.from(b).toString('hex');
const bytes = (h) => new Uint8Array(Buffer.from(h, 'hex'));

test('ints take their smallest form', () => {
  const cases = [
    [0, '00'],
    [127, '7f'],
    [128, 'cc80'],
    [255, 'ccff'],
    [256, 'cd0100'],
    [65535, 'cdffff'],
    [65536, 'ce00010000'],
    [2 ** 32 - 1, 'ceffffffff'],
    [2 ** 32, 'cf0000000100000000'],
    [Number.MAX_SAFE_INTEGER, 'cf001fffffffffffff'],
    [-1, 'ff'],
    [-32, 'e0'],
    [-33, 'd0df'],
    [-128, 'd080'],
    [-129, 'd1ff7f'],
    [-32768, 'd18000'],
    [-32769, 'd2ffff7fff'],
    [-(2 ** 31), 'd280000000'],
    [-(2 ** 31) - 1, 'd3ffffffff7fffffff'],
  ];
  for (const [n, want] of cases) {
    assert.equal(hex(encode(n)), want, `encode ${n}`);
    assert.equal(decode(bytes(want)), n, `decode ${want}`);
  }
});

test('64-bit ints beyond 2^53 decode as BigInt, not rounded', () => {
  assert.equal(decode(bytes('cfffffffffffffffff')), 0xffffffffffffffffn);
  assert.equal(decode(bytes('d38000000000000000')), -0x8000000000000000n);
  assert.equal(hex(encode(0xffffffffffffffffn)), 'cfffffffffffffffff');
  assert.equal(hex(encode(5n)), '05');
});

test('strings, bin, floats, bool, nil', () => {
  assert.equal(hex(encode('')), 'a0');
  assert.equal(hex(encode('abc')), 'a3616263');
  assert.equal(hex(encode('é')), 'a2c3a9');
  const s32 = 'x'.repeat(32);
  assert.equal(hex(encode(s32)).slice(0, 4), 'd920');
  const s256 = 'y'.repeat(256);
  assert.equal(hex(encode(s256)).slice(0, 6), 'da0100');
  const s70k = 'z'.repeat(70000);
  assert.equal(hex(encode(s70k)).slice(0, 10), 'db00011170');
  for (const s of ['', 'abc', 'é', s32, s256, s70k, '日本語のテキスト', '😀 emoji', 'a'.repeat(31) + 'é']) {
    assert.equal(decode(encode(s)), s);
  }
  assert.equal(hex(encode(new Uint8Array([1, 2]))), 'c4020102');
  assert.deepEqual(decode(bytes('c4020102')), new Uint8Array([1, 2]));
  assert.ok(decode(bytes('c50000')) instanceof Uint8Array);
  assert.equal(hex(encode(1.5)), 'cb3ff8000000000000');
  assert.equal(decode(bytes('ca3fc00000')), 1.5);
  assert.equal(hex(encode(true)), 'c3');
  assert.equal(hex(encode(false)), 'c2');
  assert.equal(hex(encode(null)), 'c0');
  assert.equal(decode(bytes('c0')), null);
});

test('maps and arrays; undefined fields are omitted', () => {
  assert.equal(hex(encode({ a: 1, b: undefined })), '81a16101');
  assert.equal(hex(encode([1, 'a'])), '9201a161');
  const v = {
    type: 'frames',
    data: new Uint8Array([0x91, 0x80]),
    request_id: 7,
    nested: { list: [1, -1, 300, 'x', null, true, { k: [] }] },
  };
  assert.deepEqual(decode(encode(v)), v);
  const big = Array.from({ length: 70000 }, (_, i) => i);
  assert.deepEqual(decode(encode(big)), big);
  const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i]));
  assert.equal(hex(encode(wide)).slice(0, 6), 'de0014');
  assert.deepEqual(decode(encode(wide)), wide);
});

test('a __proto__ key is data, not a prototype', () => {
  const v = decode(bytes('81a95f5f70726f746f5f5f81a17801'));
  assert.deepEqual(Object.keys(v), ['__proto__']);
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
});

test('malformed input throws MsgpackError, never hangs or allocates wildly', () => {
  for (const h of ['', 'c1', 'a3616', 'dc', 'ddffffffff', 'dfffffffff', 'c6ffffffff00', '92', '0101']) {
    assert.throws(() => decode(bytes(h)), MsgpackError, `input ${h}`);
  }
});

test('timestamps decode to Date', () => {
  assert.equal(decode(bytes('d6ff00000001')).getTime(), 1000);
});

test('every sized form decodes, and a truncated one throws', () => {
  const cases = [
    ['cc ff', 255], ['cd 0100', 256], ['ce 00010000', 65536],
    ['d0 80', -128], ['d1 8000', -32768], ['d2 80000000', -2147483648],
    ['ca 3fc00000', 1.5], ['cb 3ff8000000000000', 1.5],
    ['d9 03 616263', 'abc'], ['da 0003 616263', 'abc'], ['db 00000003 616263', 'abc'],
    ['dc 0002 01 02', [1, 2]], ['dd 00000002 01 02', [1, 2]],
    ['de 0001 a16b 01', { k: 1 }], ['df 00000001 a16b 01', { k: 1 }],
  ];
  for (const [h, want] of cases) {
    const b = bytes(h.replaceAll(' ', ''));
    assert.deepEqual(decode(b), want, h);
    assert.throws(() => decode(b.subarray(0, b.length - 1)), MsgpackError, `truncated ${h}`);
  }
  for (const h of ['c4 02 0102', 'c5 0002 0102', 'c6 00000002 0102']) {
    assert.deepEqual(decode(bytes(h.replaceAll(' ', ''))), new Uint8Array([1, 2]), h);
  }
  // ext 8/16/32 of an unknown type decode to {type, data}, or at least do
  // not throw on a well-formed input; a truncated one does.
  for (const h of ['c7 01 05 aa', 'c8 0001 05 aa', 'c9 00000001 05 aa']) {
    const b = bytes(h.replaceAll(' ', ''));
    decode(b);
    assert.throws(() => decode(b.subarray(0, b.length - 1)), MsgpackError, `truncated ${h}`);
  }
});
