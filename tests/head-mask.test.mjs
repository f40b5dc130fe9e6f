// head_mask: a multiplier of each head's output before W_O, on Layer.forward,
// Layer.trace and KVCache.step. Reference: its definition — switching head j off equals zeroing
// rows j·d_v … (j+1)·d_v of W_O (built here as a separate layer) —
// and a factor of 0.5 halves the head's contribution (output − b_O is linear in each head's output).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA, mulberry32 } from '../web/lib/src/index.js';
import { throwsMHA } from './helpers/errors.mjs';
import { tierOptions } from './helpers/tier.mjs';
import { maxDiff } from './helpers/model-golden.mjs';

const mha = await createMHA(tierOptions());
const d = 16, h = 4, dk = 4, T = 6;
const rand = mulberry32(21);
const r = (n) => Float32Array.from({ length: n }, () => rand() - 0.5);
const W = { wQ: r(d * d), wK: r(d * 8), wV: r(d * 8), wO: r(d * d), bQ: r(d), bK: r(8), bV: r(8), bO: r(d) };
const pack = (w) => Object.fromEntries(Object.entries(w).map(([k, v]) => [k, { data: v, shape: k[0] === 'b' ? [v.length] : [d, v.length / d] }]));
const layerWith = (w) => mha.createLayer({ dModel: d, numHeads: h, kvHeads: 2, weights: pack(w) });
const x = { data: r(T * d), shape: [T, d] };


test('headMask 0 equals the head\'s W_O rows zeroed; its attention weights are still returned', () => {
  const full = layerWith(W);
  const wO = W.wO.slice();
  wO.fill(0, 2 * dk * d, 3 * dk * d);
  const zeroed = layerWith({ ...W, wO });
  for (const causal of [false, true]) {
    const a = full.forward(x, { causal, headMask: [1, 1, 0, 1] });
    const b = zeroed.forward(x, { causal });
    assert.ok(maxDiff(a.output.data, b.output.data) < 1e-6);
    assert.deepEqual(Array.from(a.weights.data), Array.from(full.forward(x, { causal }).weights.data));
  }
  // 0.5: half the head's contribution
  const on = full.forward(x).output.data, off = full.forward(x, { headMask: [1, 1, 0, 1] }).output.data;
  const half = full.forward(x, { headMask: new Float32Array([1, 1, 0.5, 1]) }).output.data;
  for (let i = 0; i < on.length; i++) assert.ok(Math.abs(half[i] - (on[i] + off[i]) / 2) < 1e-5);
  // the trace's concat holds the masked head outputs
  const tr = full.trace(x, { headMask: [0, 1, 1, 1] });
  assert.ok(tr.concat.data.subarray(0, dk).every((v) => v === 0));
  full.dispose(); zeroed.dispose();
});

test('KVCache.step with headMask equals the masked forward\'s rows', () => {
  const l = layerWith(W);
  const want = l.forward(x, { causal: true, headMask: [0, 1, 1, 0.25] }).output.data;
  const c = l.createKVCache({ maxLen: T });
  for (const [t0, n] of [[0, 2], [2, 1], [3, 3]]) {
    const y = c.step({ data: x.data.subarray(t0 * d, (t0 + n) * d), shape: [n, d] }, { headMask: [0, 1, 1, 0.25] }).output.data;
    assert.ok(maxDiff(y, want.subarray(t0 * d, (t0 + n) * d)) < 1e-5);
  }
  l.dispose();
});

test('bad headMask values are refused, naming the argument, the expected and the actual value', () => {
  const l = layerWith(W);
  throwsMHA(() => l.forward(x, { headMask: [1, 0] }), 'SHAPE_MISMATCH', [/headMask/, /\[4\]/, /\[2\]/]);
  throwsMHA(() => l.forward(x, { headMask: 'all' }), 'INVALID_ARGUMENT', [/headMask must be an array of 4 numbers/]);
  const e = throwsMHA(() => l.forward(x, { headMask: [1, NaN, 1, 1] }), 'NON_FINITE', [/headMask\[1\]/]);
  assert.deepEqual(e.index, [1]);
  throwsMHA(() => l.createKVCache({ maxLen: 4 }).step({ data: x.data.subarray(0, d), shape: [1, d] }, { headMask: [1, 1, 1] }), 'SHAPE_MISMATCH', [/step: headMask/]);
  assert.equal(l.forward(x).output.shape[0], T, 'the layer keeps working');
  l.dispose();
});
