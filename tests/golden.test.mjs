// Every case of tests/golden/ (PyTorch 1.13, float64) through the public JS API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMHA } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { loadGolden, input, tolerance, assertClose } from './helpers/golden.mjs';

const mha = await createMHA(tierOptions());
const cases = loadGolden();

function weightsOf(c) {
  const w = c.weights;
  const out = { wQ: input(w.Wq), wK: input(w.Wk), wV: input(w.Wv), wO: input(w.Wo) };
  for (const [a, b] of [['bQ', 'bq'], ['bK', 'bk'], ['bV', 'bv'], ['bO', 'bo']]) if (w[b]) out[a] = input(w[b]);
  return out;
}

/** The README's float32 tolerance; the tiny-input case is compared relatively (no 1e-5 floor). */
const tol = (c, key) => tolerance(c, key, { floor: c.config.input_scale < 1e-3 ? 0 : 1e-5 });

function layerFor(c) {
  const k = c.config;
  if (c.kind === 'gqa') {
    return mha.createLayer({ dModel: k.embed_dim, numHeads: k.num_heads, kvHeads: k.num_kv_heads, dK: k.head_dim, bias: k.bias, weights: weightsOf(c) });
  }
  return mha.createLayer({
    dModel: k.embed_dim, numHeads: k.num_heads, kDim: k.kdim, vDim: k.vdim, bias: k.bias, weights: weightsOf(c),
  });
}

/** Rows [b, q] that torch left NaN (fully masked): compare them separately. */
function nanRowSkipper(c, rowLen, perHead) {
  const rows = new Set((c.config.fully_masked_query_rows || []).map(([b, q]) => `${b},${q}`));
  const { B, Tq, num_heads: h } = c.config;
  return (i) => {
    if (!rows.size) return false;
    const t = Math.floor(i / rowLen);
    if (perHead) { const q = t % Tq, b = Math.floor(t / (Tq * h)); return rows.has(`${b},${q}`); }
    const q = t % Tq, b = Math.floor(t / Tq);
    return rows.has(`${b},${q}`);
  };
}

/** Compares the trace's per-head q/k/v/scores and concat with the packed intermediates. */
function checkTrace(c, tr, name) {
  const o = c.outputs;
  const { num_heads: h } = c.config;
  const g = c.config.num_kv_heads || h;
  const tl = tol(c, 'output');
  const cat = (parts, key) => {
    // parts: per-head tensors [B, T, w]; interleave along the last axis like the packed layout
    const B = parts[0].shape[0], T = parts[0].shape[1];
    const widths = parts.map((p) => p.shape[2]);
    const W = widths.reduce((a, b) => a + b, 0);
    const out = new Float32Array(B * T * W);
    for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) {
      let off = 0;
      parts.forEach((p, i) => { out.set(p.data.subarray((b * T + t) * widths[i], (b * T + t + 1) * widths[i]), (b * T + t) * W + off); off += widths[i]; });
    }
    return out;
  };
  const rep = h / g;
  if (o.q_proj) assertClose(cat(tr.heads.map((x) => x.q)), o.q_proj, tl, `${name} q_proj`);
  if (o.k_proj) assertClose(cat(tr.heads.filter((_, i) => i % rep === 0).map((x) => x.k)), o.k_proj, tl, `${name} k_proj`);
  if (o.v_proj) assertClose(cat(tr.heads.filter((_, i) => i % rep === 0).map((x) => x.v)), o.v_proj, tl, `${name} v_proj`);
  if (o.concat) assertClose(tr.concat, o.concat, tl, `${name} concat`, nanRowSkipper(c, tr.concat.shape[2], false));
  if (o.scores) {
    // scores [B, h, Tq, Tk] before the mask
    const B = tr.heads[0].scores.shape[0];
    const plane = tr.heads[0].scores.data.length / B;
    const s = new Float32Array(B * h * plane);
    for (let b = 0; b < B; b++) tr.heads.forEach((x, i) => s.set(x.scores.data.subarray(b * plane, (b + 1) * plane), (b * h + i) * plane));
    assertClose(s, o.scores, tol(c, 'output'), `${name} scores`);
  }
}

for (const { file, c } of cases) {
  if (c.kind === 'seed_restaurant' || c.kind === 'lesson_widget' || c.kind === 'kv_cache') continue;
  test(`golden ${file}`, () => {
    const layer = layerFor(c);
    const inp = c.inputs;
    const q = input(inp.query || inp.x);
    const opts = {};
    if (inp.key && !c.config.self_attention) { opts.key = input(inp.key); opts.value = input(inp.value); }
    if (inp.attn_mask) {
      opts.attnMask = inp.attn_mask.dtype === 'bool'
        ? { data: Uint8Array.from(inp.attn_mask.data), shape: inp.attn_mask.shape }
        : input(inp.attn_mask);
    }
    if (inp.key_padding_mask) opts.keyPaddingMask = { data: Uint8Array.from(inp.key_padding_mask.data), shape: inp.key_padding_mask.shape };
    const E = c.config.embed_dim;
    const out = c.outputs;
    const r = layer.forward(q, opts);
    assert.deepEqual(r.output.shape, out.output.shape);
    assert.deepEqual(r.weights.shape, out.attn_weights_per_head.shape);
    const Tk = r.weights.shape[3];
    assertClose(r.output, out.output, tol(c, 'output'), 'output', nanRowSkipper(c, E, false));
    assertClose(r.weights, out.attn_weights_per_head, tol(c, 'attn_weights_per_head'), 'weights', nanRowSkipper(c, Tk, true));
    const avg = layer.forward(q, { ...opts, averageWeights: true });
    assertClose(avg.weights, out.attn_weights_avg, tol(c, 'attn_weights_per_head'), 'averaged weights', nanRowSkipper(c, Tk, false));
    assertClose(avg.output, r.output.data, { atol: 0, rtol: 0 }, 'output with averaged weights');
    const nw = layer.forward(q, { ...opts, needWeights: false });
    assert.equal(nw.weights, undefined);
    assertClose(nw.output, r.output.data, { atol: 1e-6, rtol: 1e-6 }, 'output without weights');
    checkTrace(c, layer.trace(q, opts), file);

    if (c.config.causal) {
      // The same with causal: true instead of the explicit boolean mask.
      const { attnMask, ...rest } = opts;
      const rc = layer.forward(q, { ...rest, causal: true });
      assertClose(rc.output, out.output, tol(c, 'output'), 'output (causal flag)');
      assertClose(rc.weights, out.attn_weights_per_head, tol(c, 'attn_weights_per_head'), 'weights (causal flag)');
    }
    if (c.config.fully_masked_query_rows) {
      // Our convention: a fully masked row has weights 0 and attention output 0, so output = b_O.
      const bo = c.weights.bo.data;
      const { Tq, num_heads: h } = c.config;
      for (const [b, qi] of c.config.fully_masked_query_rows) {
        for (let i = 0; i < h; i++) for (let k = 0; k < Tk; k++) assert.equal(r.weights.get(b, i, qi, k), 0);
        for (let e = 0; e < E; e++) assert.ok(Math.abs(r.output.get(b, qi, e) - bo[e]) < 1e-6, `output[${b}, ${qi}, ${e}] should be b_O`);
        assert.ok(r.output.data.every(Number.isFinite), 'no NaN anywhere');
        assert.ok(Tq > qi);
      }
    }
    // Unbatched input gives the batch-0 slice.
    const B = q.shape[0];
    if (B === 1 && !inp.key_padding_mask && !(inp.attn_mask && inp.attn_mask.shape.length === 3)) {
      const u = layer.forward({ data: q.data, shape: q.shape.slice(1) }, {
        ...opts,
        key: opts.key && { data: opts.key.data, shape: opts.key.shape.slice(1) },
        value: opts.value && { data: opts.value.data, shape: opts.value.shape.slice(1) },
      });
      assert.deepEqual(u.output.shape, q.shape.slice(1));
      assertClose(u.output, r.output.data, { atol: 0, rtol: 0 }, 'unbatched output');
    }
    layer.dispose();
  });
}

test('golden kv_cache: token-by-token steps equal causal self-attention', () => {
  const kvCases = cases.filter((x) => x.c.kind === 'kv_cache');
  assert.ok(kvCases.length >= 2);
  for (const { file, c } of kvCases) {
    const { B, T, embed_dim: E, num_heads: h } = c.config;
    const layer = layerFor(c);
    const cache = layer.createKVCache({ maxLen: T, batch: B });
    const x = input(c.inputs.x);
    const ref = c.outputs.step_outputs.data, refW = c.outputs.attn_weights_per_head.data;
    const tls = tol(c, 'step_outputs');
    for (let t = 0; t < T; t++) {
      const xt = new Float32Array(B * E);
      for (let b = 0; b < B; b++) xt.set(x.data.subarray((b * T + t) * E, (b * T + t + 1) * E), b * E);
      const r = cache.step({ data: xt, shape: [B, 1, E] });
      assert.equal(cache.length, t + 1);
      assert.deepEqual(r.weights.shape, [B, h, 1, t + 1]);
      const expOut = [], expW = [];
      for (let b = 0; b < B; b++) {
        for (let e = 0; e < E; e++) expOut.push(ref[(b * T + t) * E + e]);
        for (let i = 0; i < h; i++) for (let k = 0; k <= t; k++) expW.push(refW[((b * h + i) * T + t) * T + k]);
      }
      assertClose(r.output, expOut, tls, `${file} step ${t} output`);
      assertClose(r.weights, expW, tol(c, 'attn_weights_per_head'), `${file} step ${t} weights`);
    }
    // Past maxLen: a clear error, and the cache still works after reset().
    assert.throws(() => cache.step({ data: new Float32Array(B * E), shape: [B, 1, E] }), (e) => e.code === 'INVALID_ARGUMENT' && /maxLen = \d+/.test(e.message));
    cache.reset();
    assert.equal(cache.length, 0);
    // A whole prompt in one step gives the same outputs as the token-by-token steps.
    const all = cache.step(x);
    assertClose(all.output, ref, tls, `${file} one-step prompt`);
    layer.dispose();
  }
});

test('golden seed_restaurant: the worked example, every intermediate', () => {
  const { c } = cases.find((x) => x.c.kind === 'seed_restaurant');
  const w = c.weights;
  const layer = mha.createLayer({
    weights: { heads: w.heads.map((hd) => ({ wQ: input(hd.Wq), wK: input(hd.Wk), wV: input(hd.Wv) })), wO: input(w.Wo) },
  });
  assert.deepEqual(layer.config.headDims, { dK: [2, 2], dV: [3, 2] });
  const tr = layer.trace(input(c.inputs.X));
  const tol = { atol: 1e-5, rtol: 1e-5 };
  c.outputs.heads.forEach((ref, i) => {
    const got = tr.heads[i];
    assertClose(got.q, ref.Q, tol, `head ${i} Q`);
    assertClose(got.k, ref.K, tol, `head ${i} K`);
    assertClose(got.v, ref.V, tol, `head ${i} V`);
    assertClose(got.scores, ref.S, tol, `head ${i} S`);
    assertClose(got.weights, ref.A, tol, `head ${i} A`);
    assertClose(got.output, ref.head_output, tol, `head ${i} output`);
  });
  assert.deepEqual(tr.concat.shape, [3, 5]);
  assertClose(tr.concat, c.outputs.concat, tol, 'concat');
  assertClose(tr.output, c.outputs.output, tol, 'output');
  // Alex's final "cheap" (row 0, column 1): 4.050 to three decimals (the seed's 4.001 was hand-rounded).
  assert.equal(tr.output.get(0, 1).toFixed(3), '4.050');
  layer.dispose();
});

test('golden lesson_widget: h = 1, 2, 4, 8 re-slice the same weights; passport counts', () => {
  const { c } = cases.find((x) => x.c.kind === 'lesson_widget');
  const { d_model: d, T } = c.config;
  const x = input(c.inputs.x);
  for (const ref of c.outputs.by_heads) {
    const h = ref.num_heads;
    const layer = mha.createLayer({ dModel: d, numHeads: h, bias: false, weights: weightsOf(c) });
    const r = layer.forward(x);
    const tol = { atol: 1e-5, rtol: 1e-4 };
    assertClose(r.output, ref.output, tol, `h=${h} output`);
    assertClose(r.weights, ref.attn_weights_per_head, tol, `h=${h} weights`);
    const p = mha.passport({ seqLen: T, dModel: d, numHeads: h, bias: false });
    assert.equal(p.dK, ref.head_dim);
    assert.equal(p.params.wQPerHead, ref.params.per_head_W_Q);
    assert.equal(p.params.wQ, ref.params.total_W_Q);
    assert.equal(p.params.total, ref.params.total);
    assert.equal(p.params.singleHeadWQ, 576);
    assert.equal(p.flops.projections, ref.flops.qkv_projection);
    assert.equal(p.flops.scores, ref.flops.scores_QKt);
    assert.equal(p.flops.weighted, ref.flops.weighted_sum_AV);
    assert.equal(p.flops.output, ref.flops.output_projection);
    assert.equal(p.flops.matmul, ref.flops.matmul_total);
    // scaling + softmax: h·T·(6·T + 1), counted in total
    assert.equal(p.flops.softmax, h * T * (6 * T + 1));
    assert.equal(p.flops.total, ref.flops.matmul_total + h * T * (6 * T + 1));
    layer.dispose();
  }
});
