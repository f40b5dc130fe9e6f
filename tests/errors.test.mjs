// Bad input: every case gets an MHAError with the right code and a message that names the
// argument, the expected and the actual value; the module keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { throwsMHA, stillWorksProbe } from './helpers/errors.mjs';

const mha = await createMHA(tierOptions());
const x5 = Array.from({ length: 5 }, (_, t) => Array.from({ length: 24 }, (_, e) => Math.sin(t * 24 + e)));
const probe = stillWorksProbe(mha);

/** Asserts fn throws MHAError with `code` and a message matching every regexp; then that the module still works. */
function throwsThenWorks(fn, code, ...patterns) {
  throwsMHA(fn, code, patterns);
  probe.check();
}

test('numHeads not dividing dModel (no dK) is INVALID_CONFIG naming both', () => {
  throwsThenWorks(() => mha.createLayer({ dModel: 24, numHeads: 5 }), 'INVALID_CONFIG', /numHeads/, /dModel = 24/, /numHeads = 5/);
  throwsThenWorks(() => mha.passport({ seqLen: 5, dModel: 24, numHeads: 7 }), 'INVALID_CONFIG', /dModel = 24/, /numHeads = 7/);
  // With dK given, any h works.
  const p = mha.passport({ seqLen: 5, dModel: 24, numHeads: 5, dK: 4 });
  assert.equal(p.params.wQ, 24 * 20);
});

test('kvHeads not dividing numHeads is INVALID_CONFIG', () => {
  throwsThenWorks(() => mha.createLayer({ dModel: 24, numHeads: 4, kvHeads: 3 }), 'INVALID_CONFIG', /kvHeads/, /numHeads \(4\)/, /kvHeads = 3/);
});

test('non-integer, negative, string sizes are INVALID_CONFIG', () => {
  throwsThenWorks(() => mha.createLayer({ dModel: 24.5, numHeads: 2 }), 'INVALID_CONFIG', /dModel/, /24\.5/);
  throwsThenWorks(() => mha.createLayer({ dModel: -4, numHeads: 2 }), 'INVALID_CONFIG', /dModel/, /-4/);
  throwsThenWorks(() => mha.createLayer({ dModel: '24', numHeads: 2 }), 'INVALID_CONFIG', /dModel/, /"24"/);
  throwsThenWorks(() => mha.createLayer({ numHeads: 2 }), 'INVALID_CONFIG', /dModel is required/);
  throwsThenWorks(() => mha.passport({ seqLen: 0, dModel: 24, numHeads: 2 }), 'INVALID_CONFIG', /seqLen/, /got 0/);
});

test('a weight of the wrong shape is SHAPE_MISMATCH naming it with both shapes', () => {
  const w = (r, c) => ({ data: new Float32Array(r * c), shape: [r, c] });
  throwsThenWorks(() => mha.createLayer({ dModel: 24, numHeads: 2, bias: false, weights: { wQ: w(24, 24), wK: w(24, 12), wV: w(24, 24), wO: w(24, 24) } }),
    'SHAPE_MISMATCH', /weights\.wK/, /expected shape \[24, 24\]/, /got \[24, 12\]/);
  throwsThenWorks(() => mha.createLayer({ dModel: 24, numHeads: 2, bias: true, weights: { wQ: w(24, 24), wK: w(24, 24), wV: w(24, 24), wO: w(24, 24) } }),
    'INVALID_ARGUMENT', /weights\.bQ is missing/, /\[24\]/);
  throwsThenWorks(() => mha.createLayer({ dModel: 4, numHeads: 1, weights: { wQ: [[1, 2], [3]], wK: w(4, 4), wV: w(4, 4), wO: w(4, 4) } }),
    'SHAPE_MISMATCH', /weights\.wQ\[1\]/, /length 2/);
});

test('NaN or Infinity in weights is NON_FINITE with the index', () => {
  const wq = new Float32Array(24 * 24); wq[5 * 24 + 7] = NaN;
  const z = () => ({ data: new Float32Array(576), shape: [24, 24] });
  throwsThenWorks(() => mha.createLayer({ dModel: 24, numHeads: 2, bias: false, weights: { wQ: { data: wq, shape: [24, 24] }, wK: z(), wV: z(), wO: z() } }),
    'NON_FINITE', /weights\.wQ\[5, 7\]/, /NaN/);
  const wo = new Float32Array(576); wo[3] = Infinity;
  throwsThenWorks(() => mha.createLayer({ dModel: 24, numHeads: 2, bias: false, weights: { wQ: z(), wK: z(), wV: z(), wO: { data: wo, shape: [24, 24] } } }),
    'NON_FINITE', /weights\.wO\[0, 3\]/, /Infinity/);
});

test('NaN or Infinity in inputs is NON_FINITE with the index', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
  const bad = x5.map((r) => r.slice()); bad[3][11] = NaN;
  throwsThenWorks(() => l.forward(bad), 'NON_FINITE', /query\[3, 11\]/, /NaN/);
  const badB = [x5.map((r) => r.slice()), x5.map((r) => r.slice())]; badB[1][0][2] = -Infinity;
  throwsThenWorks(() => l.forward(badB), 'NON_FINITE', /query\[1, 0, 2\]/, /-Infinity/);
  throwsThenWorks(() => l.forward(x5, { attnMask: Array.from({ length: 5 }, () => [0, 0, NaN, 0, 0]) }), 'NON_FINITE', /attnMask\[0, 2\]/);
  // -Infinity is a legal additive mask value.
  const r = l.forward(x5, { attnMask: Array.from({ length: 5 }, () => [0, -Infinity, 0, 0, 0]) });
  assert.equal(r.weights.get(0, 2, 1), 0);
  l.dispose();
});

test('query/key/value width or length mismatch is SHAPE_MISMATCH', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, kDim: 6, vDim: 8, seed: 1 });
  const m = (r, c) => Array.from({ length: r }, () => new Array(c).fill(0.5));
  throwsThenWorks(() => l.forward(m(5, 23), { key: m(7, 6), value: m(7, 8) }), 'SHAPE_MISMATCH', /query/, /\[Tq, 24\]/, /\[5, 23\]/);
  throwsThenWorks(() => l.forward(m(5, 24), { key: m(7, 5), value: m(7, 8) }), 'SHAPE_MISMATCH', /key/, /kDim = 6/, /\[7, 5\]/);
  throwsThenWorks(() => l.forward(m(5, 24), { key: m(7, 6), value: m(6, 8) }), 'SHAPE_MISMATCH', /value/, /\[7, 8\]/, /\[6, 8\]/);
  throwsThenWorks(() => l.forward(m(5, 24)), 'SHAPE_MISMATCH', /kDim = 6/, /pass key and value/);
  throwsThenWorks(() => l.forward([[1, 2], [3]]), 'SHAPE_MISMATCH', /query\[1\]/);
  throwsThenWorks(() => l.forward([]), 'SHAPE_MISMATCH', /query/);
  throwsThenWorks(() => l.forward('hello'), 'INVALID_ARGUMENT', /query must be/, /string/);
  throwsThenWorks(() => l.forward([['a', 'b']]), 'INVALID_ARGUMENT', /query/, /must be a number, got string/);
  const r = l.forward(m(5, 24), { key: m(7, 6), value: m(7, 8) });
  assert.deepEqual(r.weights.shape, [2, 5, 7]);
  l.dispose();
});

test('a mask of the wrong shape is SHAPE_MISMATCH naming it', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
  throwsThenWorks(() => l.forward(x5, { attnMask: Array.from({ length: 4 }, () => new Array(5).fill(false)) }), 'SHAPE_MISMATCH', /attnMask/, /\[5, 5\]/, /\[4, 5\]/);
  throwsThenWorks(() => l.forward(x5, { keyPaddingMask: [[false, false, true]] }), 'SHAPE_MISMATCH', /keyPaddingMask/, /\[5\]/, /\[1, 3\]/);
  throwsThenWorks(() => l.forward(x5, { causal: 'yes' }), 'INVALID_ARGUMENT', /causal must be a boolean/);
  l.dispose();
});

test('use after dispose is DISPOSED', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
  const cache = l.createKVCache({ maxLen: 4 });
  l.dispose();
  l.dispose();  // idempotent
  throwsThenWorks(() => l.forward(x5), 'DISPOSED', /forward/, /disposed/);
  throwsThenWorks(() => l.trace(x5), 'DISPOSED', /trace/);
  throwsThenWorks(() => l.createKVCache({ maxLen: 3 }), 'DISPOSED', /createKVCache/);
  throwsThenWorks(() => cache.step([x5[0]]), 'DISPOSED', /step/, /disposed/);
});

test('KV cache past maxLen and bad cache options are INVALID_ARGUMENT', () => {
  const l = mha.createLayer({ dModel: 24, numHeads: 2, seed: 1 });
  throwsThenWorks(() => l.createKVCache({ maxLen: 0 }), 'INVALID_ARGUMENT', /maxLen must be a positive integer, got 0/);
  throwsThenWorks(() => l.createKVCache({}), 'INVALID_ARGUMENT', /maxLen/, /undefined/);
  const cache = l.createKVCache({ maxLen: 4 });
  cache.step(x5.slice(0, 3));
  throwsThenWorks(() => cache.step(x5.slice(0, 2)), 'INVALID_ARGUMENT', /holds 3 of maxLen = 4/, /2 more/);
  throwsThenWorks(() => cache.step(x5.slice(3, 4), 'x'), 'INVALID_ARGUMENT', /step: options must be an object, got string/);
  throwsThenWorks(() => cache.step(x5.slice(3, 4), null), 'INVALID_ARGUMENT', /step: options must be an object, got null/);
  assert.equal(cache.length, 3);
  const r = cache.step(x5.slice(3, 4));
  assert.deepEqual(r.weights.shape, [2, 1, 4]);
  l.dispose();
});

test('a request larger than the heap can give is OUT_OF_MEMORY with the bytes, before allocating', () => {
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 1 });
  const before = mha.memory();
  const T = 30000;  // weights [1, 2, T, T] alone would be 7.2 GB
  const q = { data: new Float32Array(T * 8), shape: [T, 8] };
  // No probe here (the plain helper): the next line checks that nothing was allocated.
  throwsMHA(() => l.forward(q), 'OUT_OF_MEMORY', /needs \d+ bytes/, { minBytes: 2 * T * T * 4 + 1 });
  assert.ok(mha.memory().inUseBytes <= before.inUseBytes + 64, 'nothing was allocated');
  // Without weights the same input fits (scores are computed block by block).
  const r = l.forward(q, { needWeights: false });
  assert.equal(r.output.shape[0], T);
  assert.ok(r.output.data.every(Number.isFinite));
  throwsThenWorks(() => l.createKVCache({ maxLen: 2 ** 30 }), 'OUT_OF_MEMORY', /needs \d+ bytes/);
  l.dispose();
});

test('float32 overflow in an unbatched call names the output index without a batch axis', () => {
  const big = (v) => ({ data: new Float32Array(16).fill(v), shape: [4, 4] });
  const l = mha.createLayer({ dModel: 4, numHeads: 2, bias: false, weights: { wQ: big(1e20), wK: big(1e20), wV: big(1e20), wO: big(1e20) } });
  const x = { data: new Float32Array(8).fill(1e20), shape: [2, 4] };
  throwsThenWorks(() => l.forward(x), 'NON_FINITE', /^forward: float32 overflow: output\[\d+, \d+\] is /);
  throwsThenWorks(() => l.forward({ data: x.data, shape: [1, 2, 4] }), 'NON_FINITE', /float32 overflow: output\[0, \d+, \d+\] is /);
  const c = l.createKVCache({ maxLen: 4 });
  throwsThenWorks(() => c.step(x), 'NON_FINITE', /^step: float32 overflow: output\[\d+, \d+\] is /);
  throwsThenWorks(() => c.step({ data: new Float32Array(4).fill(NaN), shape: [1, 4] }), 'NON_FINITE', /^step: x\[0, 0\] is NaN/);
  l.dispose();
});

test('core errors carry argument, index and bytes as fields, in the API names and the caller’s shape', () => {
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 3 });
  const q = new Float32Array(2 * 3 * 8);
  q[24 + 8 + 5] = NaN;  // batch 1, row 1, column 5
  let e = throwsMHA(() => l.forward({ data: q, shape: [2, 3, 8] }), 'NON_FINITE', /^forward: query\[1, 1, 5\] is NaN; expected a finite number$/);
  assert.equal(e.argument, 'query');
  assert.deepEqual(e.index, [1, 1, 5]);
  // unbatched: the core ran B = 1, the error speaks of the caller's [Tq, dModel]
  e = throwsMHA(() => l.forward({ data: q.subarray(8 * 3), shape: [3, 8] }), 'NON_FINITE', /^forward: query\[1, 5\] is NaN/);
  assert.deepEqual(e.index, [1, 5]);
  // a per-head attention mask's first index is b·h + head, not the batch: kept whole
  const mask = new Float32Array(2 * 9);
  mask[4] = Infinity;  // head 0, query 1, key 1 of an unbatched call: the leading 0 is the head
  e = throwsMHA(() => l.forward({ data: new Float32Array(24), shape: [3, 8] }, { attnMask: { data: mask, shape: [2, 3, 3] } }),
    'NON_FINITE', /attnMask\[0, 1, 1\] is Infinity; expected a finite number or -Infinity/);
  assert.equal(e.argument, 'attnMask');
  assert.deepEqual(e.index, [0, 1, 1]);
  const kpm = new Float32Array(3);
  kpm[2] = NaN;
  e = throwsMHA(() => l.forward({ data: new Float32Array(24), shape: [3, 8] }, { keyPaddingMask: { data: kpm, shape: [3] } }),
    'NON_FINITE', /keyPaddingMask\[2\] is NaN/);
  assert.equal(e.argument, 'keyPaddingMask');
  // configuration errors name the argument in the API's camelCase
  e = throwsMHA(() => mha.createLayer({ dModel: 24, numHeads: 4, kvHeads: 3 }), 'INVALID_CONFIG', /^kvHeads must divide numHeads \(4\), got kvHeads = 3$/);
  assert.equal(e.argument, 'kvHeads');
  assert.equal(e.index, undefined);
  e = throwsMHA(() => mha.passport({ seqLen: 5, dModel: 24, numHeads: 5 }), 'INVALID_CONFIG', /^numHeads must divide dModel when dK is not given/);
  assert.equal(e.argument, 'numHeads');
  const w = (r, c, bad) => ({ data: Float32Array.from({ length: r * c }, (_, i) => (i === bad ? -Infinity : 0)), shape: [r, c] });
  e = throwsMHA(() => mha.createLayer({ dModel: 8, numHeads: 2, bias: false, weights: { wQ: w(8, 8), wK: w(8, 8), wV: w(8, 8), wO: w(8, 8, 8 * 7 + 3) } }),
    'NON_FINITE', /weights\.wO\[7, 3\] is -Infinity/);
  assert.equal(e.argument, 'weights.wO');
  assert.deepEqual(e.index, [7, 3]);
  probe.check();
});
