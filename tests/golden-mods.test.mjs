// The score modifiers (softcap, ALiBi, sliding window) and RoPE (rope_* cases) against tests/golden-mods/ (float64 PyTorch
// reference written from the papers: scripts/golden/score_mods.py), through the public JS API, on
// every path: needWeights true (direct or packed), averaged, false (direct, packed or streaming),
// the trace, unbatched, and the KV cache token by token (causal cases).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { input, tolerance, assertClose } from './helpers/golden.mjs';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'golden-mods');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
assert.ok(files.length >= 10, `golden-mods cases missing in ${dir}`);
const mha = await createMHA(tierOptions());

/** The layer options of a case: weights and the score modifiers as the case gives them. */
function layerOptions(c) {
  const k = c.config, w = c.weights;
  const weights = { wQ: input(w.Wq), wK: input(w.Wk), wV: input(w.Wv), wO: input(w.Wo) };
  for (const [a, b] of [['bQ', 'bq'], ['bK', 'bk'], ['bV', 'bv'], ['bO', 'bo']]) if (w[b]) weights[a] = input(w[b]);
  const o = { dModel: k.embed_dim, numHeads: k.num_heads, kvHeads: k.num_kv_heads, bias: k.bias, weights };
  if (k.softcap !== null) o.softcap = k.softcap;
  if (k.alibi === 'default') o.alibi = true;
  if (k.alibi === 'given') o.alibiSlopes = Float32Array.from(k.alibi_slopes);
  if (k.window !== null) o.window = k.window;
  if (k.rope_given) o.rope = k.rope_given;  // {dim?, base?, interleaved?} as the case gives them
  return o;
}

// float32 tolerance: the golden README's rule, |err| ≤ max(1e-5, 20·hint) + 1e-4·|ref|.
const tol = (c, key) => tolerance(c, key);

for (const file of files) {
  const c = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  test(`golden-mods ${file}`, () => {
    const k = c.config;
    const layer = mha.createLayer(layerOptions(c));
    if (k.rope) assert.deepEqual({ ...layer.config.rope }, k.rope, 'resolved rope');
    else assert.equal(layer.config.rope, undefined);
    if (k.alibi) assertClose(layer.config.alibiSlopes, Float32Array.from(k.alibi_slopes), { atol: 0, rtol: 0 }, 'resolved slopes (float32)');
    const x = input(c.inputs.x);
    const opts = { causal: k.causal };
    if (c.inputs.key_padding_mask) {
      opts.keyPaddingMask = { data: Uint8Array.from(c.inputs.key_padding_mask.data), shape: c.inputs.key_padding_mask.shape };
    }
    const out = c.outputs;
    const E = k.embed_dim, h = k.num_heads, T = k.Tq;
    const nw = layer.forward(x, { ...opts, needWeights: false });
    assertClose(nw.output, out.output, tol(c, 'output'), 'output without weights');
    if (out.attn_weights_per_head) {
      const r = layer.forward(x, opts);
      assertClose(r.output, out.output, tol(c, 'output'), 'output');
      assertClose(r.weights, out.attn_weights_per_head, tol(c, 'attn_weights_per_head'), 'weights');
      const avg = layer.forward(x, { ...opts, averageWeights: true });
      assertClose(avg.weights, out.attn_weights_avg, tol(c, 'attn_weights_per_head'), 'averaged weights');
      // The trace: scores after soft-cap and ALiBi, before any mask; weights and output as forward.
      const tr = layer.trace(x, opts);
      const B = k.B;
      const s = new Float32Array(B * h * T * T), wts = new Float32Array(B * h * T * T);
      for (let b = 0; b < B; b++) {
        tr.heads.forEach((hd, i) => {
          s.set(hd.scores.data.subarray(b * T * T, (b + 1) * T * T), (b * h + i) * T * T);
          wts.set(hd.weights.data.subarray(b * T * T, (b + 1) * T * T), (b * h + i) * T * T);
        });
      }
      assertClose(s, out.scores, { atol: 1e-4, rtol: 1e-4 }, 'traced scores');
      assertClose(wts, out.attn_weights_per_head, tol(c, 'attn_weights_per_head'), 'traced weights');
      assertClose(tr.output, out.output, tol(c, 'output'), 'traced output');
      for (const [b, q] of k.fully_masked_query_rows) {
        for (let i = 0; i < h; i++) for (let j = 0; j < T; j++) assert.equal(r.weights.get(b, i, q, j), 0);
      }
      if (B === 1) {
        const u = layer.forward({ data: x.data, shape: x.shape.slice(1) }, opts);
        assertClose(u.output, r.output.data, { atol: 0, rtol: 0 }, 'unbatched output');
      }
    }
    if (k.causal && !c.inputs.key_padding_mask) {
      // KV cache, one token at a time and then in chunks: the queries sit at positions cache.length + i.
      const cache = layer.createKVCache({ maxLen: T, batch: k.B });
      const rowsOf = (t0, n) => {
        const d = new Float32Array(k.B * n * E);
        for (let b = 0; b < k.B; b++) d.set(x.data.subarray((b * T + t0) * E, (b * T + t0 + n) * E), b * n * E);
        return { data: d, shape: k.B > 1 ? [k.B, n, E] : [n, E] };
      };
      const got = new Float32Array(k.B * T * E);
      for (let t0 = 0, chunk = 1; t0 < T; t0 += chunk, chunk++) {  // steps of 1, 2, 3, … tokens
        const n = Math.min(chunk, T - t0);
        const st = cache.step(rowsOf(t0, n));
        for (let b = 0; b < k.B; b++) got.set(st.output.data.subarray(b * n * E, (b + 1) * n * E), (b * T + t0) * E);
      }
      assertClose(got, out.output, tol(c, 'output'), 'KV cache steps');
      cache.dispose();
    }
    layer.dispose();
  });
}

test('golden-mods: the passport counts the modifiers', () => {
  const base = { seqLen: 5, dModel: 8, numHeads: 2, batch: 3 };
  const p0 = mha.passport(base);
  assert.equal(p0.flops.scoreMods, 0);
  const scores = 3 * 2 * 5 * 5;
  assert.equal(mha.passport({ ...base, softcap: 30 }).flops.scoreMods, 3 * scores);
  assert.equal(mha.passport({ ...base, alibi: true }).flops.scoreMods, 2 * scores);
  const p = mha.passport({ ...base, softcap: 30, alibiSlopes: [1, 2], window: [2, 0] });
  assert.equal(p.flops.scoreMods, 5 * scores);
  assert.equal(p.flops.total, p0.flops.total + 5 * scores);
  assert.match(p.steps.find((s) => s.name === 'per-head scores').formula, /tanh.*m_i.*window/);
});

test('golden-mods: the passport counts RoPE (3 FLOPs per rotated element of Q and K)', () => {
  const base = { seqLen: 5, keyLen: 7, dModel: 16, numHeads: 4, kvHeads: 2, batch: 3, kDim: 16, vDim: 16 };
  const p0 = mha.passport(base);
  assert.equal(p0.flops.rope, 0);
  const p = mha.passport({ ...base, rope: true });  // dim = dK = 4
  assert.equal(p.flops.rope, 3 * 3 * (5 * 4 * 4 + 7 * 2 * 4));
  assert.equal(p.flops.total, p0.flops.total + p.flops.rope);
  assert.equal(mha.passport({ ...base, rope: { dim: 2 } }).flops.rope, 3 * 3 * (5 * 4 * 2 + 7 * 2 * 2));
  assert.equal(mha.passport({ ...base, rope: { dim: 0 } }).flops.rope, 0);
  assert.equal(mha.passport({ ...base, rope: false }).flops.rope, 0);
});
