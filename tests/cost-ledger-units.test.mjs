// The cost ledger's arithmetic and words (web/lib/components/logic/cost-ledger.js) without an engine:
// costLedger on a stand-in passport with several layers and a batch of several sequences (so that
// a factor of L or B in the wrong place shows), the unit texts at their boundaries, and the two
// sentences on hand-made ledgers. tests/cost-ledger.test.mjs checks the same functions against the
// engine's passport and published model sizes. Mutation testing (StrykerJS) measures cost-ledger.js
// with both suites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costLedger, bytesText, flopsText, memorySentence, flopsSentence, nonAttentionParams, LEDGER_LIMITS } from '../web/lib/components/logic/cost-ledger.js';

/** An engine whose passport returns fixed numbers and records what it was asked. */
function standIn() {
  const asked = [];
  return {
    asked,
    passport: (cfg) => {
      asked.push(cfg);
      return {
        dK: 4, dV: 4, params: { total: 1000 },
        flops: { total: 500, projections: 100, output: 50, matmul: 400, softmax: 100 },
        memory: { scores: 30, kvCache: 999 },
      };
    },
  };
}
const base = { dModel: 8, heads: 4, kvHeads: 2, layers: 3, context: 5, batch: 2, dtypeBytes: 2 };
const gelu = { mlp: 'gelu', dFF: 32, vocab: 100, tied: true, positions: 0, norm: 'layernorm' };

test('LEDGER_LIMITS: the largest values the ledger accepts', () => {
  assert.deepEqual({ ...LEDGER_LIMITS }, { context: 1048576, batch: 4096, layers: 1000, dModel: 65536, heads: 65536, dtypeBytes: 8 });
  assert.ok(Object.isFrozen(LEDGER_LIMITS));
});

test('costLedger: the passport asked once with the configuration; L, B, T and bytes applied where they belong', () => {
  const mha = standIn();
  const r = costLedger(mha, { ...base, model: gelu });
  assert.deepEqual(mha.asked, [{ seqLen: 5, batch: 2, dModel: 8, numHeads: 4, kvHeads: 2 }]);
  assert.equal(r.dK, 4);
  assert.deepEqual(r.attention, { params: 1000, bytesPerLayer: 2000, bytes: 6000 });
  // per layer: attention 1000 + GELU MLP 2·8·32 + 32 + 8 = 552 + two LayerNorms 2·16; once: embedding 100·8, final norm 16
  assert.deepEqual(nonAttentionParams({ ...gelu, dModel: 8 }), { mlpPerLayer: 552, normsPerLayer: 32, embeddings: 800, unembedding: 0, positions: 0, finalNorm: 16 });
  assert.deepEqual(r.weights, { params: 3 * (1000 + 552 + 32) + 800 + 16, bytes: 2 * 5568, complete: true });
  // K and V of 2 kv heads of d_k = d_v = 4, over 3 layers, 2 sequences of 5 tokens
  assert.deepEqual(r.kvCache, { elements: 3 * 2 * 5 * 2 * 8, bytes: 2 * 480 });
  assert.deepEqual(r.scores, { elements: 30, bytesPerLayer: 60, bytesAllLayers: 180 });
  const mlp = 3 * 2 * 2 * 5 * 2 * 8 * 32;   // L · 2 FLOPs · B · T · 2 matrices · d · d_FF
  const unembedding = 2 * 2 * 5 * 8 * 100;  // 2 FLOPs · B · T · d · vocab
  assert.deepEqual(r.flops, {
    projections: 3 * 150, matmul: 1200, softmax: 300, attention: 1500, mlp, unembedding,
    total: 1500 + mlp + unembedding, perToken: (1500 + mlp + unembedding) / 10,
  });
  // SwiGLU: three matrices
  const s = costLedger(standIn(), { ...base, model: { ...gelu, mlp: 'swiglu' } });
  assert.equal(s.flops.mlp, 3 * 2 * 2 * 5 * 3 * 8 * 32);
});

test('costLedger: attention layers only without a model; bias false passed on, kvHeads defaulting to heads', () => {
  const mha = standIn();
  const r = costLedger(mha, { ...base, kvHeads: undefined, bias: false, model: null });
  assert.deepEqual(mha.asked, [{ seqLen: 5, batch: 2, dModel: 8, numHeads: 4, kvHeads: undefined, bias: false }]);
  assert.deepEqual(r.weights, { params: 3000, bytes: 6000, complete: false });
  assert.equal(r.flops.mlp, 0);
  assert.equal(r.flops.unembedding, 0);
  assert.equal(r.flops.total, 1500);
  assert.equal(r.flops.perToken, 150);
  assert.equal(r.kvCache.elements, 3 * 2 * 5 * 4 * 8, 'all 4 heads keep K and V');
  const withBias = standIn();
  costLedger(withBias, { ...base, bias: true });
  assert.equal('bias' in withBias.asked[0], false, 'bias: true is the engine default, not passed');
});

test('bytesText and flopsText: decimal units, 0 / 2 / 1 decimals by size, the largest unit kept past 1000', () => {
  assert.equal(bytesText(0), '0 B');
  assert.equal(bytesText(999), '999 B');
  assert.equal(bytesText(1000), '1.00 kB');
  assert.equal(bytesText(9990), '9.99 kB');
  assert.equal(bytesText(10000), '10.0 kB');
  assert.equal(bytesText(12345), '12.3 kB');
  assert.equal(bytesText(5e6), '5.00 MB');
  assert.equal(bytesText(1342177280), '1.34 GB');
  assert.equal(bytesText(7e12), '7.00 TB');
  assert.equal(bytesText(2.5e15), '2.50 PB');
  assert.equal(bytesText(1e18), '1000.0 PB');
  assert.equal(flopsText(0), '0 FLOP');
  assert.equal(flopsText(999), '999 FLOP');
  assert.equal(flopsText(1000), '1.00 kFLOP');
  assert.equal(flopsText(10000), '10.0 kFLOP');
  assert.equal(flopsText(25440), '25.4 kFLOP');
  assert.equal(flopsText(3e6), '3.00 MFLOP');
  assert.equal(flopsText(2.67e9), '2.67 GFLOP');
  assert.equal(flopsText(3.1e12), '3.10 TFLOP');
  assert.equal(flopsText(4e15), '4.00 PFLOP');
  assert.equal(flopsText(5e18), '5.00 EFLOP');
  assert.equal(flopsText(1e21), '1000.0 EFLOP');
});

const ledger = (W, K, S, complete = false) => ({ weights: { bytes: W, complete }, kvCache: { bytes: K }, scores: { bytesPerLayer: S } });

test('memorySentence: the three memories largest first, ratios in words, the FlashAttention note only when one layer\'s scores exceed the cache', () => {
  assert.equal(memorySentence(ledger(10000, 1000, 100)),
    'Largest: the projection weights (10.0 kB), 10× the KV cache (1.00 kB) and 100× one layer\'s attention scores (100 B).');
  assert.equal(memorySentence(ledger(19000, 2000, 1234567, true)),
    'Largest: one layer\'s attention scores (1.23 MB), 65× the weights (19.0 kB) and 617× the KV cache (2.00 kB).' +
    ' One layer\'s scores alone outweigh the whole KV cache: that is the matrix FlashAttention (Dao et al. 2022) never writes to the accelerator\'s main memory.');
  // equal scores and cache: no note; ratios under 10 with one decimal, from 10 on rounded with separators
  assert.equal(memorySentence(ledger(1e6, 1000, 1000)),
    'Largest: the projection weights (1.00 MB), 1,000× the KV cache (1.00 kB) and 1,000× one layer\'s attention scores (1.00 kB).');
  assert.equal(memorySentence(ledger(950, 9500, 100, true)),
    'Largest: the KV cache (9.50 kB), 10× the weights (950 B) and 95× one layer\'s attention scores (100 B).');
  assert.equal(memorySentence(ledger(9990, 1000, 1000)),
    'Largest: the projection weights (9.99 kB), 10.0× the KV cache (1.00 kB) and 10.0× one layer\'s attention scores (1.00 kB).');
  assert.equal(memorySentence(ledger(1500, 1000, 1000)),
    'Largest: the projection weights (1.50 kB), 1.5× the KV cache (1.00 kB) and 1.5× one layer\'s attention scores (1.00 kB).');
});

test('flopsSentence: shares with 3 significant digits, 2 decimals from 99.5 % to just under 100 %, 2 digits under 1 %', () => {
  const f = (o) => flopsSentence({ flops: { mlp: 0, ...o } });
  assert.equal(f({ softmax: 5, matmul: 995, attention: 1000, total: 1000 }),
    'The softmax is 0.50 % of the attention FLOPs; the matrix products are 99.50 % of the attention FLOPs.');
  assert.equal(f({ softmax: 10, matmul: 1000, attention: 1000, total: 1000 }),
    'The softmax is 1.00 % of the attention FLOPs; the matrix products are 100 % of the attention FLOPs.');
  assert.equal(f({ softmax: 3, matmul: 997, attention: 1000, total: 1000 }),
    'The softmax is 0.30 % of the attention FLOPs; the matrix products are 99.70 % of the attention FLOPs.');
  assert.equal(f({ softmax: 6, matmul: 994, attention: 1000, total: 1000 }),
    'The softmax is 0.60 % of the attention FLOPs; the matrix products are 99.4 % of the attention FLOPs.');
  assert.equal(f({ softmax: 10, matmul: 990, attention: 1000, total: 4000, mlp: 3000 }),
    'The softmax is 1.00 % of the attention FLOPs and 0.25 % of the whole forward; the matrix products are 99.0 % of the attention FLOPs.');
});
