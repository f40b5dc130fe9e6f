// The honest cost ledger: the passport's softmax FLOPs and memory, and the figures of
// <mha-cost-ledger> (web/lib/components/logic/cost-ledger.js), against numbers computed by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { costLedger, modelParams, memorySentence, flopsSentence, ledgerByHeads } from '../web/lib/components/logic/cost-ledger.js';
import { DECODERS } from '../web/lib/components/logic/models-data.js';

const mha = await createMHA();
const preset = (name) => DECODERS.find((m) => m.name === name);
const ledgerOf = (m, over = {}) => costLedger(mha, {
  dModel: m.dModel, heads: m.heads, kvHeads: m.kvHeads, layers: m.layers, context: m.context, batch: 1, dtypeBytes: 2,
  bias: m.bias !== false, model: m, ...over,
});

test('passport: softmax = h·Tq·(6·Tk + 1) and is in total; matrix products the same at every h (widget, T = 5, d_model = 24)', () => {
  const seen = [];
  for (const h of [1, 2, 3, 4, 6, 8]) {
    const p = mha.passport({ seqLen: 5, dModel: 24, numHeads: h, bias: false });
    // Q, K, V: 3·2·5·24·24 = 17,280; Q·Kᵀ and A·V: 2·5·5·24 = 1,200 each; W_O: 2·5·24·24 = 5,760
    assert.equal(p.flops.matmul, 17280 + 1200 + 1200 + 5760);
    assert.equal(p.flops.softmax, h * 5 * (6 * 5 + 1));          // 155 per head
    assert.equal(p.flops.total, 25440 + 155 * h);
    assert.equal(p.memory.scores, h * 5 * 5);                    // h·T² grows with h
    assert.equal(p.memory.scoreBytes, 4 * h * 25);
    assert.equal(p.memory.kvCache, 2 * 5 * 24);                  // 2·T·h·d_k = 2·T·d_model: fixed
    assert.equal(p.memory.kvCacheBytes, 4 * 240);
    seen.push(p.flops.total);
  }
  assert.deepEqual(seen, [25595, 25750, 25905, 26060, 26370, 26680]);
});

test('passport: the original Transformer (d_model 512, h 8, T 10, B 2) and a cross-attention GQA layer', () => {
  const p = mha.passport({ seqLen: 10, dModel: 512, numHeads: 8, batch: 2 });
  assert.equal(p.flops.softmax, 2 * 8 * 10 * 61);
  assert.equal(p.memory.scores, 2 * 8 * 10 * 10);
  assert.equal(p.memory.kvCache, 2 * 10 * 2 * 512);
  // Tq ≠ Tk, g < h, d_v ≠ d_k: K and V of the g kv heads over Tk keys
  const q = mha.passport({ seqLen: 3, keyLen: 7, batch: 2, dModel: 32, numHeads: 8, kvHeads: 2, dK: 5, dV: 7 });
  assert.equal(q.flops.softmax, 2 * 8 * 3 * (6 * 7 + 1));
  assert.equal(q.memory.scores, 2 * 8 * 3 * 7);
  assert.equal(q.memory.kvCache, 2 * 7 * 2 * (5 + 7));
  assert.equal(q.flops.total, q.flops.matmul + q.flops.softmax);
  // the modifiers stay counted on top of the softmax
  const s = mha.passport({ seqLen: 3, keyLen: 7, batch: 2, dModel: 32, numHeads: 8, softcap: 30 });
  assert.equal(s.flops.total, s.flops.matmul + s.flops.softmax + 3 * 2 * 8 * 3 * 7);
});

test('model weights: the published totals of GPT-2 small, GPT-3 175B and LLaMA-2 70B', () => {
  const totals = { 'GPT-2 (small)': 124439808, 'GPT-3 175B': 174604259328, 'LLaMA-2 70B': 68976648192 };
  for (const m of DECODERS) {
    const attn = mha.passport({ seqLen: 1, dModel: m.dModel, numHeads: m.heads, kvHeads: m.kvHeads, bias: m.bias !== false }).params.total;
    assert.equal(modelParams(m, attn), totals[m.name], m.name);
  }
});

test('ledger, LLaMA-2 70B at T = 4096, B = 1, 2 bytes: 138 GB of weights, 1.34 GB of KV cache, 2.15 GB of scores per layer', () => {
  const r = ledgerOf(preset('LLaMA-2 70B'));
  const attn = 2 * 8192 * 8192 + 2 * 8192 * 1024;                       // no biases
  assert.equal(r.attention.params, attn);
  assert.equal(r.attention.bytesPerLayer, 2 * attn);
  assert.equal(r.weights.bytes, 2 * 68976648192);                        // 137,953,296,384 B
  assert.equal(r.kvCache.bytes, 2 * 80 * 4096 * 8 * 128 * 2);            // 1,342,177,280 B
  assert.equal(r.scores.elements, 64 * 4096 * 4096);
  assert.equal(r.scores.bytesPerLayer, 2 * 64 * 4096 * 4096);            // 2,147,483,648 B
  const matmul = 80 * (2 * 4096 * (8192 * 8192 + 2 * 8192 * 1024) + 2 * 2 * 4096 * 4096 * 8192 + 2 * 4096 * 8192 * 8192);
  assert.equal(r.flops.matmul, matmul);
  assert.equal(r.flops.softmax, 80 * 64 * 4096 * (6 * 4096 + 1));
  assert.equal(r.flops.mlp, 80 * 2 * 4096 * 3 * 8192 * 28672);
  assert.equal(r.flops.unembedding, 2 * 4096 * 8192 * 32000);
  assert.equal(r.flops.total, matmul + r.flops.softmax + r.flops.mlp + r.flops.unembedding);
  assert.equal(r.flops.perToken, r.flops.total / 4096);
  assert.match(memorySentence(r), /^Largest: the weights \(138\.0 GB\), 64× one layer's attention scores \(2\.15 GB\) and 103× the KV cache \(1\.34 GB\)\. One layer's scores alone outweigh the whole KV cache/);
  assert.match(flopsSentence(r), /^The softmax is 0\.36 % of the attention FLOPs and 0\.085 % of the whole forward; the matrix products are 99\.64 %/);
});

test('ledger, GPT-3 175B at T = 2048: 349 GB of weights, 9.66 GB of KV cache, 805 MB of scores per layer', () => {
  const r = ledgerOf(preset('GPT-3 175B'));
  assert.equal(r.attention.params, 4 * 12288 * 12288 + 4 * 12288);
  assert.equal(r.weights.bytes, 2 * 174604259328);
  assert.equal(r.kvCache.bytes, 2 * 96 * 2048 * 96 * 128 * 2);            // 9,663,676,416 B
  assert.equal(r.scores.bytesPerLayer, 2 * 96 * 2048 * 2048);            // 805,306,368 B
  assert.equal(r.flops.softmax, 96 * 96 * 2048 * (6 * 2048 + 1));
  assert.equal(r.flops.mlp, 96 * 2 * 2048 * 2 * 12288 * 49152);
  assert.match(memorySentence(r), /^Largest: the weights \(349\.2 GB\), 36× the KV cache \(9\.66 GB\) and 434× one layer's attention scores \(805\.3 MB\)\.$/);
});

test('ledger, widget config (T = 5, d_model = 24, 1 layer, float32): h moves the softmax and the scores, not the projections', () => {
  const rows = [1, 2, 4, 8].map((h) => costLedger(mha, { dModel: 24, heads: h, kvHeads: h, layers: 1, context: 5, batch: 1, dtypeBytes: 4, bias: false, model: null }));
  for (const [i, r] of rows.entries()) {
    const h = [1, 2, 4, 8][i];
    assert.equal(r.weights.params, 4 * 24 * 24);
    assert.equal(r.weights.bytes, 4 * 2304);
    assert.equal(r.kvCache.bytes, 4 * 2 * 5 * 24);
    assert.equal(r.scores.elements, h * 25);
    assert.equal(r.flops.projections, 2 * 5 * 24 * 24 * 4);
    assert.equal(r.flops.softmax, 155 * h);
    assert.equal(r.flops.total, 25440 + 155 * h);
  }
  assert.match(flopsSentence(rows[3]), /^The softmax is 4\.65 % of the attention FLOPs;/);
});

test('the ledger\'s "as h varies" table: g follows h with the group h/g kept, so the projection FLOPs are the same in every row (section 3)', () => {
  for (const m of DECODERS) {
    const cfg = { dModel: m.dModel, heads: m.heads, kvHeads: m.kvHeads, layers: m.layers, context: m.context, batch: 1, dtypeBytes: 2,
      bias: m.bias !== false, model: m, presetHeads: m.heads };
    const { group, rows } = ledgerByHeads(mha, cfg);
    assert.equal(group, m.heads / m.kvHeads);
    assert.ok(rows.length >= 4, m.name);
    const base = ledgerOf(m).flops.projections;
    for (const r of rows) {
      assert.equal(r.error, undefined, `${m.name} h = ${r.h}`);
      assert.equal(r.h / r.g, group, `${m.name} h = ${r.h}: each K/V head serves ${group} query heads`);
      assert.equal(r.projections, base, `${m.name} h = ${r.h}: projections ${r.projections} against ${base}`);
      assert.equal(r.softmax, m.layers * r.h * m.context * (6 * m.context + 1));
    }
  }
  // LLaMA-2 70B: groups of 8, so the table starts at h = 8 (175.9 TFLOP would be h = 1 with g = 1, a wider K and V)
  const llama = DECODERS.find((m) => m.name === 'LLaMA-2 70B');
  const t = ledgerByHeads(mha, { dModel: 8192, heads: 64, kvHeads: 8, layers: 80, context: 4096, batch: 1, dtypeBytes: 2, bias: false, model: llama, presetHeads: 64 });
  assert.deepEqual(t.rows.map((r) => r.h), [8, 16, 32, 64, 128, 256, 512]);
});
