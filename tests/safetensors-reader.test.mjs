// The safetensors reader (web/lib/src/formats/safetensors.js) value by value, without an engine: every
// dtype with several elements (all 65,536 half-precision patterns against a conversion by float32
// bits), every check at its boundary (the value just accepted and the one just refused, with the
// message), the views asBytes accepts, and the overlap rule on tensors listed out of order.
// tests/safetensors.test.mjs fuzzes the reader with a real model; this suite is the one mutation
// testing (StrykerJS) runs for safetensors.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSafetensors, asBytes, MAX_HEADER_BYTES } from '../web/lib/src/formats/safetensors.js';
import { MHAError } from '../web/lib/src/engine/errors.js';
import { Tensor } from '../web/lib/src/engine/tensor.js';

/** A file from a header (object or JSON text) and a data area (bytes, or a length of zeros). */
function file(header, data = 0, headerLength) {
  const h = typeof header === 'string' || header instanceof Uint8Array
    ? (typeof header === 'string' ? new TextEncoder().encode(header) : header)
    : new TextEncoder().encode(JSON.stringify(header));
  const d = typeof data === 'number' ? new Uint8Array(data) : data;
  const out = new Uint8Array(8 + h.length + d.length);
  new DataView(out.buffer).setUint32(0, headerLength ?? h.length, true);
  out.set(h, 8);
  out.set(d, 8 + h.length);
  return out;
}

/** Asserts an MHAError INVALID_ARGUMENT whose message is exactly `message` (after "safetensors: "). */
function refuses(bytes, message) {
  assert.throws(() => parseSafetensors(bytes), (e) => {
    assert.ok(e instanceof MHAError, `expected MHAError, got ${e && e.constructor.name}: ${e && e.message}`);
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.equal(e.message, typeof message === 'string' ? `safetensors: ${message}` : e.message);
    if (message instanceof RegExp) assert.match(e.message, message);
    return true;
  });
}

const one = (dtype = 'F32', shape = [1], off = [0, 4]) => ({ x: { dtype, shape, data_offsets: off } });

/** float32 from half bits by moving the fields into a float32's bits (no arithmetic on the value). */
function halfByBits(hb) {
  const sign = (hb >> 15) & 1;
  let exp = (hb >> 10) & 0x1f;
  let man = hb & 0x3ff;
  const u = new Uint32Array(1);
  const f = new Float32Array(u.buffer);
  if (exp === 0x1f) u[0] = (sign << 31) | (0xff << 23) | (man << 13);
  else if (exp === 0 && man === 0) u[0] = sign << 31;
  else {
    if (exp === 0) { exp = 1; while (!(man & 0x400)) { man <<= 1; exp--; } man &= 0x3ff; }  // normalise a subnormal
    u[0] = ((sign << 31) | ((exp - 15 + 127) << 23) | (man << 13)) >>> 0;
  }
  return f[0];
}

test('every dtype, several elements each, at an offset inside the data; shapes, dtypes and metadata as stored', () => {
  const f32 = [1.5, -2.25, 3e-41, 1e30];
  const f64 = [0.1, -1e300, 2 ** -30, 7];
  const bf16 = [0x3f80, 0xc000, 0x4049, 0x0001];  // 1, −2, 3.140625, the smallest subnormal
  const d = new Uint8Array(4 + 16 + 32 + 8 + 8);
  const v = new DataView(d.buffer);
  f32.forEach((x, i) => v.setFloat32(4 + 4 * i, x, true));
  f64.forEach((x, i) => v.setFloat64(20 + 8 * i, x, true));
  bf16.forEach((x, i) => v.setUint16(52 + 2 * i, x, true));
  [0x3c00, 0xc400, 0x7bff, 0x0001].forEach((x, i) => v.setUint16(60 + 2 * i, x, true));
  const header = {
    __metadata__: { a: 'x', b: '' },
    f32: { dtype: 'F32', shape: [2, 2], data_offsets: [4, 20] },
    f64: { dtype: 'F64', shape: [4], data_offsets: [20, 52] },
    bf16: { dtype: 'BF16', shape: [1, 4, 1], data_offsets: [52, 60] },
    f16: { dtype: 'F16', shape: [2, 2], data_offsets: [60, 68] },
  };
  const { metadata, tensors, dtypes } = parseSafetensors(file(header, d));
  assert.deepEqual(metadata, { a: 'x', b: '' });
  assert.deepEqual(dtypes, { f32: 'F32', f64: 'F64', bf16: 'BF16', f16: 'F16' });
  for (const t of Object.values(tensors)) { assert.ok(t instanceof Tensor); assert.ok(t.data instanceof Float32Array); }
  assert.deepEqual(Array.from(tensors.f32.data), f32.map(Math.fround));
  assert.deepEqual(tensors.f32.shape, [2, 2]);
  assert.deepEqual(Array.from(tensors.f64.data), f64.map(Math.fround));
  assert.deepEqual(tensors.f64.shape, [4]);
  assert.deepEqual(Array.from(tensors.bf16.data), [1, -2, 3.140625, 2 ** -133]);
  assert.deepEqual(tensors.bf16.shape, [1, 4, 1]);
  assert.deepEqual(Array.from(tensors.f16.data), [1, -4, 65504, 2 ** -24]);
  // tensors and dtypes in the header's order, whatever the order of their bytes
  const r = parseSafetensors(file({ b: header.f64, a: header.f32 }, d));
  assert.deepEqual(Object.keys(r.tensors), ['b', 'a']);
  assert.deepEqual(Object.keys(r.dtypes), ['b', 'a']);
  // no __metadata__: empty metadata; no tensors at all
  assert.deepEqual(parseSafetensors(file({})), { metadata: {}, tensors: {}, dtypes: {} });
  assert.deepEqual(parseSafetensors(file({ __metadata__: {} })), { metadata: {}, tensors: {}, dtypes: {} });
});

test('F16: all 65,536 bit patterns equal a conversion by float32 bits (zeros, subnormals, normals, ±∞, NaN)', () => {
  const d = new Uint8Array(2 * 65536);
  const v = new DataView(d.buffer);
  for (let i = 0; i < 65536; i++) v.setUint16(2 * i, i, true);
  const t = parseSafetensors(file({ h: { dtype: 'F16', shape: [65536], data_offsets: [0, d.length] } }, d)).tensors.h.data;
  for (let i = 0; i < 65536; i++) {
    const want = halfByBits(i);
    if (Number.isNaN(want)) assert.ok(Number.isNaN(t[i]), `0x${i.toString(16)}: ${t[i]}`);
    else assert.ok(Object.is(t[i], want), `0x${i.toString(16)}: ${t[i]} vs ${want}`);
  }
  // a second file reads the same values (the table is built once and reused)
  const again = parseSafetensors(file({ h: { dtype: 'F16', shape: [3], data_offsets: [0, 6] } }, Uint8Array.of(0x00, 0x3c, 0x00, 0x80, 0x00, 0x7c)));
  assert.deepEqual(Array.from(again.tensors.h.data), [1, -0, Infinity]);
  assert.ok(Object.is(again.tensors.h.data[1], -0));
});

test('shapes: [] is one value, a 0 dimension is empty, 8 dimensions are the most; element counts give the bytes', () => {
  const scalar = parseSafetensors(file(one('F32', [], [0, 4]), new Uint8Array(new Float32Array([2.5]).buffer)));
  assert.deepEqual(Array.from(scalar.tensors.x.data), [2.5]);
  assert.deepEqual(scalar.tensors.x.shape, []);
  const empty = parseSafetensors(file(one('F32', [3, 0], [0, 0]), 0));
  assert.equal(empty.tensors.x.data.length, 0);
  assert.deepEqual(empty.tensors.x.shape, [3, 0]);
  const eight = [1, 1, 1, 1, 1, 1, 1, 2];
  assert.deepEqual(parseSafetensors(file(one('F64', eight, [0, 16]), 16)).tensors.x.shape, eight);
  refuses(file(one('F64', [...eight, 1], [0, 16]), 16), 'tensor "x": shape must be an array of at most 8 non-negative integers, got [1,1,1,1,1,1,1,2,1]');
  refuses(file(one('F32', '4'), 4), 'tensor "x": shape must be an array of at most 8 non-negative integers, got "4"');
  refuses(file(one('F32', [2 ** 53]), 4), 'tensor "x": shape must be an array of at most 8 non-negative integers, got [9007199254740992]');
  refuses(file(one('F32', [-1]), 4), 'tensor "x": shape must be an array of at most 8 non-negative integers, got [-1]');
  refuses(file(one('F32', [2, 3], [0, 20]), 20), 'tensor "x": shape [2,3] of F32 needs 24 bytes, data_offsets give 20');
  refuses(file(one('BF16', [3], [0, 4]), 4), 'tensor "x": shape [3] of BF16 needs 6 bytes, data_offsets give 4');
  refuses(file(one('F16', [3], [0, 8]), 8), 'tensor "x": shape [3] of F16 needs 6 bytes, data_offsets give 8');
  refuses(file(one('F64', [1], [0, 4]), 4), 'tensor "x": shape [1] of F64 needs 8 bytes, data_offsets give 4');
  // the given byte count is end − begin
  refuses(file(one('F32', [2], [4, 8]), 8), 'tensor "x": shape [2] of F32 needs 8 bytes, data_offsets give 4');
});

test('the header length: 8 bytes of it, its limit, the file\'s end, the shortest JSON object', () => {
  assert.equal(MAX_HEADER_BYTES, 100_000_000);
  refuses(new Uint8Array(0), 'the file has 0 bytes, fewer than the 8 of the header length');
  refuses(new Uint8Array(7), 'the file has 7 bytes, fewer than the 8 of the header length');
  refuses(new Uint8Array(8), 'header length 0 is too short for a JSON object');
  refuses(file('{', 0), 'header length 1 is too short for a JSON object');
  assert.deepEqual(parseSafetensors(file('{}', 0)).tensors, {});
  // exactly the end of the file is fine; one byte more is not
  assert.deepEqual(parseSafetensors(file('{}  ', 0)).metadata, {});
  refuses(file('{}', 0, 3), 'header length 3 runs past the end of the file (10 bytes)');
  // the limit itself passes the limit check (and then runs past this file's end); one more does not
  refuses(file('{}', 0, MAX_HEADER_BYTES), `header length ${MAX_HEADER_BYTES} runs past the end of the file (10 bytes)`);
  refuses(file('{}', 0, MAX_HEADER_BYTES + 1), `header length ${MAX_HEADER_BYTES + 1} exceeds the limit of ${MAX_HEADER_BYTES} bytes`);
  // the high 32 bits count: 2^32 + 2 is not 2
  const hi = file('{}', 0);
  new DataView(hi.buffer).setUint32(4, 1, true);
  refuses(hi, 'header length 4294967298 exceeds the limit of 100000000 bytes');
});

test('the header: UTF-8 JSON object only, with the kind of value named', () => {
  refuses(file('{"x": ', 0), /^safetensors: the header is not valid UTF-8 JSON \(/);
  // invalid UTF-8 inside a JSON string is refused (not replaced by U+FFFD)
  const enc = new TextEncoder();
  const bad = Uint8Array.from([...enc.encode('{"a'), 0xff, ...enc.encode('": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}')]);
  refuses(file(bad, 0), /^safetensors: the header is not valid UTF-8 JSON \(/);
  refuses(file('[1, 2]', 0), 'the header must be a JSON object, got an array');
  refuses(file('null', 0), 'the header must be a JSON object, got null');
  refuses(file('42', 0), 'the header must be a JSON object, got number');
  refuses(file('"s"', 0), 'the header must be a JSON object, got string');
  // UTF-8 names are read as such
  const u = parseSafetensors(file({ 'é€': { dtype: 'F32', shape: [0], data_offsets: [0, 0] } }, 0));
  assert.deepEqual(Object.keys(u.tensors), ['é€']);
});

test('__metadata__: an object of strings', () => {
  refuses(file({ __metadata__: null }), '__metadata__ must be an object of strings');
  refuses(file({ __metadata__: [] }), '__metadata__ must be an object of strings');
  refuses(file({ __metadata__: 'x' }), '__metadata__ must be an object of strings');
  refuses(file({ __metadata__: { a: 'ok', b: 1 } }), '__metadata__.b must be a string, got number');
  refuses(file({ __metadata__: { c: null } }), '__metadata__.c must be a string, got null');
  refuses(file({ __metadata__: { d: {} } }), '__metadata__.d must be a string, got object');
});

test('tensor entries: object, dtype, data_offsets, each with the tensor named and the value given', () => {
  refuses(file({ x: null }), 'tensor "x": expected an object {dtype, shape, data_offsets}');
  refuses(file({ x: [1] }), 'tensor "x": expected an object {dtype, shape, data_offsets}');
  refuses(file({ x: 3 }), 'tensor "x": expected an object {dtype, shape, data_offsets}');
  refuses(file(one('I64'), 4), 'tensor "x": dtype must be one of F32, F16, BF16, F64, got "I64"');
  refuses(file(one('f32'), 4), 'tensor "x": dtype must be one of F32, F16, BF16, F64, got "f32"');
  // a name inherited by every object is no dtype
  refuses(file(one('constructor'), 4), 'tensor "x": dtype must be one of F32, F16, BF16, F64, got "constructor"');
  refuses(file(one('toString'), 4), 'tensor "x": dtype must be one of F32, F16, BF16, F64, got "toString"');
  refuses(file({ x: { shape: [1], data_offsets: [0, 4] } }, 4), 'tensor "x": dtype must be one of F32, F16, BF16, F64, got undefined');
  const offs = (off) => file(one('F32', [1], off), 8);
  const msg = (off) => `tensor "x": data_offsets must be [begin, end] with 0 ≤ begin ≤ end, got ${JSON.stringify(off)}`;
  refuses(file({ x: { dtype: 'F32', shape: [1] } }, 8), 'tensor "x": data_offsets must be [begin, end] with 0 ≤ begin ≤ end, got undefined');
  for (const off of [[0], [0, 4, 8], [0.5, 4], [-1, 3], [0, -4], [4, 0], ['0', '4'], [0, 2 ** 53]]) refuses(offs(off), msg(off));
  // begin = end is an empty range; begin > end is not
  assert.equal(parseSafetensors(file(one('F32', [0], [4, 4]), 8)).tensors.x.data.length, 0);
  refuses(file(one('F32', [0], [5, 4]), 8), msg([5, 4]));
  // end exactly at the end of the data is fine; one past is not
  const d = new Uint8Array(8);
  new DataView(d.buffer).setFloat32(4, 9.5, true);
  assert.deepEqual(Array.from(parseSafetensors(file(one('F32', [1], [4, 8]), d)).tensors.x.data), [9.5]);
  refuses(file(one('F32', [1], [5, 9]), 8), 'tensor "x": data_offsets [5,9] run past the end of the data (8 bytes)');
});

test('overlap: tensors in any header order; touching ranges and empty ones are fine, sharing a byte is not', () => {
  const d = new Uint8Array(12);
  new Float32Array(d.buffer).set([1, 2, 3]);
  const e = (begin, end) => ({ dtype: 'F32', shape: [(end - begin) / 4], data_offsets: [begin, end] });
  // listed backwards, touching: parses, each tensor its own bytes
  const r = parseSafetensors(file({ c: e(8, 12), b: e(4, 8), a: e(0, 4) }, d));
  assert.deepEqual([r.tensors.a.data[0], r.tensors.b.data[0], r.tensors.c.data[0]], [1, 2, 3]);
  // an empty tensor at the begin of another one, listed after it
  const z = parseSafetensors(file({ b: e(4, 8), z: e(4, 4) }, d));
  assert.equal(z.tensors.z.data.length, 0);
  assert.equal(z.tensors.b.data[0], 2);
  refuses(file({ a: e(0, 8), b: e(4, 12) }, d), 'tensors "a" and "b" overlap');
  refuses(file({ b: e(4, 12), a: e(0, 8) }, d), 'tensors "a" and "b" overlap');
  refuses(file({ a: e(0, 8), b: e(4, 8) }, d), 'tensors "a" and "b" overlap');
  refuses(file({ a: e(0, 12), b: e(4, 8) }, d), 'tensors "a" and "b" overlap');
});

test('asBytes: a Uint8Array as is, an ArrayBuffer, any view over its own bytes only; anything else named', () => {
  const u = new Uint8Array([1, 2, 3]);
  assert.equal(asBytes(u), u);
  const buf = new ArrayBuffer(16);
  new Uint8Array(buf).set([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 10, 11, 12, 13, 14, 15]);
  const a = asBytes(buf);
  assert.ok(a instanceof Uint8Array);
  assert.equal(a.buffer, buf);
  assert.equal(a.length, 16);
  const view = asBytes(new Float32Array(buf, 4, 2));
  assert.deepEqual([view.byteOffset, view.length, view.buffer === buf], [4, 8, true]);
  assert.deepEqual(Array.from(view), [5, 4, 3, 2, 1, 0, 10, 11]);
  const dv = asBytes(new DataView(buf, 2, 3));
  assert.deepEqual(Array.from(dv), [7, 6, 5]);
  const throwsNamed = (fn, message) => assert.throws(fn, (e) => e instanceof MHAError && e.code === 'INVALID_ARGUMENT' && e.message === message);
  throwsNamed(() => asBytes('x'), 'bytes: expected an ArrayBuffer or a Uint8Array, got string');
  throwsNamed(() => asBytes(null, 'src'), 'src: expected an ArrayBuffer or a Uint8Array, got null');
  throwsNamed(() => asBytes([1, 2]), 'bytes: expected an ArrayBuffer or a Uint8Array, got object');
  throwsNamed(() => parseSafetensors(undefined), 'parseSafetensors: expected an ArrayBuffer or a Uint8Array, got undefined');
  // a file inside a larger buffer (a view with an offset) reads its own bytes
  const f = file(one('F32', [1], [0, 4]), new Uint8Array(new Float32Array([4.25]).buffer));
  const big = new Uint8Array(f.length + 5);
  big.set(f, 3);
  assert.deepEqual(Array.from(parseSafetensors(big.subarray(3, 3 + f.length)).tensors.x.data), [4.25]);
  assert.deepEqual(Array.from(parseSafetensors(new DataView(big.buffer, 3, f.length)).tensors.x.data), [4.25]);
});
