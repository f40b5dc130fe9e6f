// The lesson's data modules (web/lib/components/logic/restaurant.js and models-data.js), without an
// engine: the restaurant example's labels (the names the lesson's prose and its browser tests use),
// the shapes that tie its matrices together, woOnly against the definition of multi-head attention's
// output (concat·W_O is the sum of each head's rows of W_O applied to its slice), and the published
// model table's fields. Mutation testing (StrykerJS) measures both files with this suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PEOPLE, FEATURES, X0, HEADS, WO, CONCAT_COLS, restaurantLayerOptions, woOnly } from '../web/lib/components/logic/restaurant.js';
import { MODELS, DECODERS } from '../web/lib/components/logic/models-data.js';

const matmul = (A, B) => A.map((row) => B[0].map((_, j) => row.reduce((s, v, k) => s + v * B[k][j], 0)));
/** The shape of a matrix, checking that every row has the first row's length. */
const shape = (M) => {
  assert.ok(M.every((row) => row.length === M[0].length), 'rows of one length');
  return [M.length, M[0].length];
};

test('restaurant: the labels the lesson uses, and shapes that fit together', () => {
  assert.deepEqual(PEOPLE, ['Alex', 'Emma', 'Daniel']);
  assert.deepEqual(FEATURES, ['spicy', 'cheap', 'cozy', 'fast', 'flavor', 'vibe']);
  assert.deepEqual(HEADS.map((h) => h.name), ['taste', 'budget']);
  assert.deepEqual(HEADS.map((h) => [h.qCols, h.kCols, h.vCols]), [
    [['street-stall', 'upscale'], ['knows-street', 'knows-upscale'], ['sichuan', 'budget', 'upscale']],
    [['low', 'high'], ['knows-low', 'knows-high'], ['price', 'experience']],
  ]);
  assert.deepEqual(CONCAT_COLS, ['sichuan (h1)', 'budget (h1)', 'upscale (h1)', 'price (h2)', 'experience (h2)']);
  assert.deepEqual(shape(X0), [PEOPLE.length, FEATURES.length]);
  for (const h of HEADS) {
    assert.deepEqual(shape(h.wQ), [6, h.qCols.length], `${h.name} W_Q`);
    assert.deepEqual(shape(h.wK), [6, h.kCols.length], `${h.name} W_K`);
    assert.deepEqual(shape(h.wV), [6, h.vCols.length], `${h.name} W_V`);
    assert.equal(h.qCols.length, h.kCols.length, 'd_k of Q and K');
  }
  assert.deepEqual(shape(WO), [CONCAT_COLS.length, FEATURES.length]);
  for (const M of [X0, WO, ...HEADS.flatMap((h) => [h.wQ, h.wK, h.wV])]) {
    assert.ok(M.flat().every((v) => v > 0 && v < 1), 'every entry a weight in (0, 1)');
  }
});

test('restaurant: restaurantLayerOptions is the two heads and W_O, or another W_O', () => {
  const o = restaurantLayerOptions();
  assert.deepEqual(o, { dModel: 6, numHeads: 2, bias: false, weights: { heads: HEADS.map((h) => ({ wQ: h.wQ, wK: h.wK, wV: h.wV })), wO: WO } });
  const other = woOnly(1);
  assert.equal(restaurantLayerOptions(other).weights.wO, other);
});

test('restaurant: woOnly keeps one head\'s rows of W_O, and the two parts sum to the whole output', () => {
  const w0 = woOnly(0);
  const w1 = woOnly(1);
  assert.deepEqual(w0.slice(0, 3), WO.slice(0, 3));
  assert.deepEqual(w0.slice(3), [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]);
  assert.deepEqual(w1.slice(0, 3), [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]);
  assert.deepEqual(w1.slice(3), WO.slice(3));
  // copies: changing one leaves W_O as it is
  w0[0][0] = 42;
  w1[4][5] = 42;
  assert.equal(WO[0][0], 0.96);
  assert.equal(WO[4][5], 0.96);
  // any concatenation [3, 5]: concat·W_O = concat·woOnly(0) + concat·woOnly(1), and concat·woOnly(h)
  // is head h's slice times its rows of W_O
  const concat = [[0.3, 0.1, 0.7, 0.2, 0.9], [0.5, 0.4, 0.6, 0.8, 0.05], [0.25, 0.75, 0.15, 0.35, 0.45]];
  const full = matmul(concat, WO);
  const a = matmul(concat, woOnly(0));
  const b = matmul(concat, woOnly(1));
  full.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - a[i][j] - b[i][j]) < 1e-12)));
  const h0 = matmul(concat.map((r) => r.slice(0, 3)), WO.slice(0, 3));
  a.forEach((row, i) => row.forEach((v, j) => assert.ok(Math.abs(v - h0[i][j]) < 1e-12)));
});

test('models-data: names, attention shapes, and the decoders\' published fields', () => {
  assert.deepEqual(MODELS.map((m) => m.name), ['Transformer-base', 'Transformer-large', 'BERT-base', 'BERT-large', 'GPT-2 (small)', 'GPT-3 175B', 'LLaMA-2 70B']);
  for (const m of MODELS) {
    assert.equal(m.dModel % m.heads, 0, `${m.name}: heads divide d_model`);
    assert.equal(m.heads % m.kvHeads, 0, `${m.name}: kvHeads divide heads`);
  }
  assert.deepEqual(DECODERS.map((m) => m.name), ['GPT-2 (small)', 'GPT-3 175B', 'LLaMA-2 70B']);
  assert.deepEqual(DECODERS.map((m) => [m.layers, m.mlp, m.norm, m.tied, m.bias !== false]), [
    [12, 'gelu', 'layernorm', true, true], [96, 'gelu', 'layernorm', true, true], [80, 'swiglu', 'rmsnorm', false, false],
  ]);
  for (const m of DECODERS) {
    assert.match(m.source, /^(Radford|Brown|Touvron) et al\. 20(19|20|23) \(/, `${m.name} cites its source`);
    assert.ok(m.context >= 1024 && m.vocab >= 32000 && m.dFF >= 3 * m.dModel, `${m.name}: published sizes`);
  }
});
