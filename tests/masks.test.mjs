// Masks (web/lib/src/engine/masks.js) value by value, without an engine: what toMask makes of each
// accepted form (nested booleans or numbers, {data, shape} with Uint8Array, boolean[], Float32Array,
// other typed arrays and number[]), what prepareMasks hands the core for each accepted shape, and
// every refusal with its code and a message naming the argument, the expected and the actual value.
// Mutation testing (StrykerJS) measures masks.js with this suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toMask, prepareMasks } from '../web/lib/src/engine/masks.js';

/** Asserts fn throws an MHAError of `code` whose message matches `message` (a RegExp or exact string). */
function throwsMHA(fn, code, message) {
  assert.throws(fn, (e) => {
    assert.equal(e.name, 'MHAError');
    assert.equal(e.code, code);
    if (message instanceof RegExp) assert.match(e.message, message);
    else assert.equal(e.message, message);
    return true;
  });
}

test('toMask: nested booleans are a boolean mask (1 = masked), nested numbers an additive one', () => {
  const b = toMask([[true, false], [false, true], [true, true]], 'm');
  assert.equal(b.bool, true);
  assert.ok(b.data instanceof Uint8Array);
  assert.deepEqual([...b.data], [1, 0, 0, 1, 1, 1]);
  assert.deepEqual(b.shape, [3, 2]);
  const a = toMask([[0, -Infinity, 2.5]], 'm');
  assert.equal(a.bool, false);
  assert.ok(a.data instanceof Float32Array);
  assert.deepEqual([...a.data], [0, -Infinity, 2.5]);
  assert.deepEqual(a.shape, [1, 3]);
  // one dimension, and three (flattened row-major)
  assert.deepEqual(toMask([false, true], 'm'), { bool: true, data: Uint8Array.of(0, 1), shape: [2] });
  const three = toMask([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], 'm');
  assert.deepEqual([...three.data], [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(three.shape, [2, 2, 2]);
  // empty: additive, no values
  assert.deepEqual(toMask([], 'm'), { bool: false, data: new Float32Array(0), shape: [0] });
});

test('toMask: {data, shape} forms keep or convert their data', () => {
  const u8 = Uint8Array.of(0, 1, 1, 0);
  const m1 = toMask({ data: u8, shape: [2, 2] }, 'm');
  assert.equal(m1.bool, true);
  assert.equal(m1.data, u8, 'a Uint8Array is used as it is');
  assert.deepEqual(m1.shape, [2, 2]);
  const m2 = toMask({ data: [true, false, true], shape: [3] }, 'm');
  assert.deepEqual(m2, { bool: true, data: Uint8Array.of(1, 0, 1), shape: [3] });
  const f32 = Float32Array.of(0, -Infinity);
  const m3 = toMask({ data: f32, shape: [1, 2] }, 'm');
  assert.equal(m3.bool, false);
  assert.equal(m3.data, f32, 'a Float32Array is used as it is');
  const m4 = toMask({ data: Float64Array.of(0.5, -2), shape: [2] }, 'm');
  assert.equal(m4.bool, false);
  assert.ok(m4.data instanceof Float32Array);
  assert.deepEqual([...m4.data], [0.5, -2]);
  const m5 = toMask({ data: [1, -1, 0], shape: [3] }, 'm');
  assert.deepEqual(m5, { bool: false, data: Float32Array.of(1, -1, 0), shape: [3] });
  // an empty number[] is additive (no boolean to read)
  assert.deepEqual(toMask({ data: [], shape: [0] }, 'm'), { bool: false, data: new Float32Array(0), shape: [0] });
});

test('toMask refuses what is not a mask, naming the argument', () => {
  throwsMHA(() => toMask({ data: Uint8Array.of(1, 0, 1), shape: [2, 2] }, 'attnMask'), 'SHAPE_MISMATCH',
    'attnMask: shape [2, 2] needs 4 values, data has 3');
  throwsMHA(() => toMask({ data: null, shape: [2] }, 'attnMask'), 'SHAPE_MISMATCH', 'attnMask: shape [2] needs 2 values, data has 0');
  throwsMHA(() => toMask({ data: [1, 'x'], shape: [2] }, 'km'), 'INVALID_ARGUMENT', 'km.data[1] must be a number or boolean, got string');
  // booleans mixed with numbers: named as such, at the first element of another kind than element 0
  throwsMHA(() => toMask({ data: [true, false, true, 1], shape: [4] }, 'km'), 'INVALID_ARGUMENT',
    'km.data mixes booleans and numbers: element 3 is a number, element 0 a boolean (a mask holds booleans, true = masked, or numbers added to the scores)');
  throwsMHA(() => toMask({ data: [0, -1, true, 2], shape: [4] }, 'km'), 'INVALID_ARGUMENT',
    /^km\.data mixes booleans and numbers: element 2 is a boolean, element 0 a number \(/);
  // an element of neither kind is named first, even after a mix
  throwsMHA(() => toMask({ data: [true, 1, 'x'], shape: [3] }, 'km'), 'INVALID_ARGUMENT', 'km.data[2] must be a number or boolean, got string');
  throwsMHA(() => toMask({ data: 'ab', shape: [2] }, 'km'), 'INVALID_ARGUMENT', 'km.data must be a Uint8Array (boolean mask) or Float32Array (additive mask)');
  throwsMHA(() => toMask({ data: [1], shape: [-1] }, 'km'), 'INVALID_ARGUMENT', /km\.shape must hold non-negative integers/);
  throwsMHA(() => toMask(null, 'km'), 'INVALID_ARGUMENT', 'km must be nested arrays of booleans or numbers, or {data, shape}, got null');
  throwsMHA(() => toMask('mask', 'km'), 'INVALID_ARGUMENT', 'km must be nested arrays of booleans or numbers, or {data, shape}, got string');
  throwsMHA(() => toMask([true, 0], 'km'), 'INVALID_ARGUMENT', /^km mixes booleans and numbers: element 1 \(row-major\) is a number, element 0 a boolean \(/);
  throwsMHA(() => toMask([[0, 1], [1, false]], 'km'), 'INVALID_ARGUMENT', /^km mixes booleans and numbers: element 3 \(row-major\) is a boolean, element 0 a number \(/);
  throwsMHA(() => toMask([true, null], 'km'), 'INVALID_ARGUMENT', 'km: element 1 (row-major) must be a boolean like the first, got null');
  throwsMHA(() => toMask([[0, 1], [null, 1]], 'km'), 'INVALID_ARGUMENT', 'km: element 2 (row-major) must be a number, got null');
  throwsMHA(() => toMask([[0, 1], [1]], 'km'), 'SHAPE_MISMATCH', /km\[1\]: expected an array of length 2/);
});

const dims = { B: 2, Tq: 3, Tk: 4, h: 2, batched: true };

test('prepareMasks: no masks → the shared empty answer', () => {
  const none = prepareMasks({}, dims);
  assert.deepEqual(none, { kpm: null, kpmAdd: null, attn: null, attnKind: 'none' });
  assert.ok(Object.isFrozen(none));
  assert.equal(prepareMasks({ keyPaddingMask: null, attnMask: undefined }, dims), none);
});

test('prepareMasks: key padding mask [B, Tk] (or [Tk] unbatched), boolean or additive', () => {
  const kb = [[false, false, true, true], [false, true, false, false]];
  const r1 = prepareMasks({ keyPaddingMask: kb }, dims);
  assert.deepEqual([...r1.kpm], [0, 0, 1, 1, 0, 1, 0, 0]);
  assert.equal(r1.kpmAdd, null);
  assert.equal(r1.attn, null);
  assert.equal(r1.attnKind, 'none');
  const r2 = prepareMasks({ keyPaddingMask: [[0, 0, -1, -2], [0, -3, 0, 0]] }, dims);
  assert.equal(r2.kpm, null);
  assert.deepEqual([...r2.kpmAdd], [0, 0, -1, -2, 0, -3, 0, 0]);
  const one = { B: 1, Tq: 3, Tk: 4, h: 2, batched: false };
  assert.deepEqual([...prepareMasks({ keyPaddingMask: [true, false, false, false] }, one).kpm], [1, 0, 0, 0]);
  assert.deepEqual([...prepareMasks({ keyPaddingMask: [[true, false, false, false]] }, one).kpm], [1, 0, 0, 0]);
  throwsMHA(() => prepareMasks({ keyPaddingMask: [true, false, false, false] }, dims), 'SHAPE_MISMATCH',
    'keyPaddingMask: expected shape [2, 4] ([batch, keyLen]), got [4]');
  throwsMHA(() => prepareMasks({ keyPaddingMask: [true, false, false] }, one), 'SHAPE_MISMATCH',
    'keyPaddingMask: expected shape [4] ([batch, keyLen]), got [3]');
  throwsMHA(() => prepareMasks({ keyPaddingMask: [[0, 0, 0], [0, 0, 0]] }, dims), 'SHAPE_MISMATCH', /expected shape \[2, 4\].*got \[2, 3\]/);
  // a refusal of toMask names the option it came from
  throwsMHA(() => prepareMasks({ keyPaddingMask: 'x' }, dims), 'INVALID_ARGUMENT', /^keyPaddingMask must be nested arrays/);
  throwsMHA(() => prepareMasks({ attnMask: [[true, 1]] }, dims), 'INVALID_ARGUMENT', /^attnMask mixes booleans and numbers: element 1 \(row-major\)/);
});

test('prepareMasks: attention mask [Tq, Tk] shared, or per head [B·h, Tq, Tk] / [B, h, Tq, Tk]; booleans become −∞', () => {
  const shared = [[false, true, true, true], [false, false, true, true], [false, false, false, true]];
  const r1 = prepareMasks({ attnMask: shared }, dims);
  assert.equal(r1.attnKind, 'shared');
  assert.ok(r1.attn instanceof Float32Array);
  assert.deepEqual([...r1.attn], shared.flat().map((m) => (m ? -Infinity : 0)));
  assert.equal(r1.kpm, null);
  assert.equal(r1.kpmAdd, null);
  const add = Float32Array.from({ length: 4 * 3 * 4 }, (_, i) => -i);
  const r2 = prepareMasks({ attnMask: { data: add, shape: [4, 3, 4] } }, dims);
  assert.equal(r2.attnKind, 'perHead');
  assert.equal(r2.attn, add, 'an additive Float32Array reaches the core uncopied');
  const r3 = prepareMasks({ attnMask: { data: add, shape: [2, 2, 3, 4] } }, dims);
  assert.equal(r3.attnKind, 'perHead');
  const r4 = prepareMasks({ attnMask: { data: new Uint8Array(48).fill(1, 0, 5), shape: [2, 2, 3, 4] } }, dims);
  assert.deepEqual([...r4.attn.slice(0, 6)], [-Infinity, -Infinity, -Infinity, -Infinity, -Infinity, 0]);
  // both masks at once
  const r5 = prepareMasks({ attnMask: shared, keyPaddingMask: [[0, 0, 0, -1], [0, 0, 0, 0]] }, dims);
  assert.equal(r5.attnKind, 'shared');
  assert.deepEqual([...r5.kpmAdd], [0, 0, 0, -1, 0, 0, 0, 0]);
  for (const shape of [[3, 3], [4, 3], [2, 3, 4], [4, 3, 4, 1], [1, 2, 2, 3, 4]]) {
    const n = shape.reduce((a, b) => a * b, 1);
    throwsMHA(() => prepareMasks({ attnMask: { data: new Float32Array(n), shape } }, dims), 'SHAPE_MISMATCH',
      `attnMask: expected shape [3, 4] or [4, 3, 4] ([batch·numHeads, queryLen, keyLen]), got [${shape.join(', ')}]`);
  }
});
