// Property tests of rotary position embedding (RoPE; Su et al. 2021, RoFormer, §3.4) with fast-check,
// and its errors. A float64 reference written here from the paper:
//   Q ← R(p_q)·Q, K ← R(j)·K per head (K per kv head), after the projections: pair p of the first r
//   dims — (x[2p], x[2p+1]) interleaved (RoFormer, GPT-J) or (x[p], x[p + r/2]) halves (GPT-NeoX,
//   HF Llama) — rotated by the angle pos·θ^(−2p/r); dims ≥ r unchanged.
//   S = Q_i·K_gᵀ/√d_k;  S ← cap·tanh(S / cap);  S ← S − m_i·|p_q − j|;  masks (causal, window, padding);
//   A = softmax (all-masked rows → 0);  out = concat(A·V)·W_O + b_O
// Properties: random layers and calls (both layouts, partial dims, GQA, batches, causal / padding,
// the score modifiers, needWeights, the trace's q and k after rotation) match the reference; the
// streaming path; cross-attention (positions from 0 for queries and keys); shifting every position by
// s gives the same outputs and scores (scores depend only on i − j); dim 0 / no rope equals no RoPE;
// a KV-cache step equals the same rows of the full forward; errors for every bad value.
// FC_NUM_RUNS sets the runs per property (default 200 here: each run is several forwards).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMHA, mulberry32 } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { assertClose } from './helpers/golden.mjs';
import { checkCacheProperty } from './helpers/kv-cache.mjs';
import { RUNS, fcParams, values, layerDesc } from './helpers/random-layer.mjs';
import { throwsMHA, stillWorksProbe } from './helpers/errors.mjs';

const mha = await createMHA(tierOptions());

/** RoPE in float64 of rows [n, width] (heads of dk side by side, nh of them), row t at position pos0 + t. */
function ropeRef(X, n, nh, dk, pos0, rope) {
  if (!rope) return X;
  const r = rope === true || rope.dim === undefined ? dk : rope.dim, base = rope === true || rope.base === undefined ? 10000 : rope.base;
  const inter = rope !== true && rope.interleaved === true;
  const Y = Float64Array.from(X), half = r / 2, fb = Math.fround(base);
  for (let t = 0; t < n; t++) for (let hh = 0; hh < nh; hh++) for (let p = 0; p < half; p++) {
    const ang = (pos0 + t) * fb ** (-2 * p / r), c = Math.cos(ang), s = Math.sin(ang);
    const o = (t * nh + hh) * dk, ia = o + (inter ? 2 * p : p), ib = o + (inter ? 2 * p + 1 : p + half);
    Y[ia] = X[ia] * c - X[ib] * s;
    Y[ib] = X[ia] * s + X[ib] * c;
  }
  return Y;
}

/** The float64 reference: xq [B, Tq, d], xk [B, Tk, kd] (= xq in self-attention). */
function reference(L, slopes, xq, xk, B, Tq, Tk, { causal = false, kpm = null } = {}) {
  const { d, kd, h, g, dk, w } = L;
  const lin = (X, rows, din, W, b, n) => {
    const Y = new Float64Array(rows * n);
    for (let r = 0; r < rows; r++) for (let c = 0; c < n; c++) {
      let s = b[c];
      for (let k = 0; k < din; k++) s += X[r * din + k] * W[k * n + c];
      Y[r * n + c] = s;
    }
    return Y;
  };
  const Q = new Float64Array(B * Tq * h * dk), K = new Float64Array(B * Tk * g * dk);
  for (let b = 0; b < B; b++) {  // positions from 0 in every batch element, for queries and keys
    Q.set(ropeRef(lin(xq.subarray(b * Tq * d, (b + 1) * Tq * d), Tq, d, w.wQ, w.bQ, h * dk), Tq, h, dk, 0, L.rope), b * Tq * h * dk);
    K.set(ropeRef(lin(xk.subarray(b * Tk * kd, (b + 1) * Tk * kd), Tk, kd, w.wK, w.bK, g * dk), Tk, g, dk, 0, L.rope), b * Tk * g * dk);
  }
  const V = lin(xk, B * Tk, kd, w.wV, w.bV, g * dk);
  const out = new Float64Array(B * Tq * d), A = new Float64Array(B * h * Tq * Tk), SC = new Float64Array(B * h * Tq * Tk);
  const scale = 1 / Math.sqrt(dk), win = L.window, cap = L.softcap;
  for (let b = 0; b < B; b++) {
    const cat = new Float64Array(Tq * h * dk);
    for (let i = 0; i < h; i++) {
      const gi = Math.floor(i / (h / g));
      for (let p = 0; p < Tq; p++) {
        const S = new Float64Array(Tk), m = new Array(Tk).fill(false);
        for (let j = 0; j < Tk; j++) {
          let s = 0;
          for (let k = 0; k < dk; k++) s += Q[(b * Tq + p) * h * dk + i * dk + k] * K[(b * Tk + j) * g * dk + gi * dk + k];
          s *= scale;
          if (cap !== null) s = cap * Math.tanh(s / cap);
          if (slopes) s -= slopes[i] * Math.abs(p - j);
          S[j] = s;
          SC[((b * h + i) * Tq + p) * Tk + j] = s;
          if (causal && j > p) m[j] = true;
          if (win && win[0] >= 0 && j < p - win[0]) m[j] = true;
          if (win && win[1] >= 0 && j > p + win[1]) m[j] = true;
          if (kpm && kpm[b * Tk + j]) m[j] = true;
        }
        let mx = -Infinity;
        for (let j = 0; j < Tk; j++) if (!m[j]) mx = Math.max(mx, S[j]);
        if (mx === -Infinity) continue;  // every key masked: weights and output 0
        let z = 0;
        const e = new Float64Array(Tk);
        for (let j = 0; j < Tk; j++) if (!m[j]) { e[j] = Math.exp(S[j] - mx); z += e[j]; }
        for (let j = 0; j < Tk; j++) {
          const a = e[j] / z;
          A[((b * h + i) * Tq + p) * Tk + j] = a;
          for (let k = 0; k < dk; k++) cat[p * h * dk + i * dk + k] += a * V[(b * Tk + j) * g * dk + gi * dk + k];
        }
      }
    }
    for (let p = 0; p < Tq; p++) for (let c = 0; c < d; c++) {
      let s = w.bO[c];
      for (let k = 0; k < h * dk; k++) s += cat[p * h * dk + k] * w.wO[k * d + c];
      out[(b * Tq + p) * d + c] = s;
    }
  }
  return { output: out, weights: A, scores: SC, Q, K };
}

const slopesOf = (layer) => (layer.config.alibiSlopes ? Array.from(layer.config.alibiSlopes) : null);

// RoPE options: true, or {dim?, base?, interleaved?} with an even dim ≤ dk
const ropeArb = (dk) => fc.oneof(
  fc.constant(true),
  fc.record({
    dim: fc.option(fc.integer({ min: 0, max: dk / 2 }).map((x) => 2 * x), { nil: undefined }),
    base: fc.option(fc.double({ min: 1.5, max: 20000, noNaN: true }), { nil: undefined }),
    interleaved: fc.option(fc.boolean(), { nil: undefined }),
  }, { requiredKeys: [] }));
const layerArb = fc.record({
  dk: fc.constantFrom(2, 4, 6, 8), h: fc.constantFrom(1, 2, 4), rep: fc.constantFrom(1, 2), seed: fc.nat(),
  softcap: fc.constantFrom(null, null, 4), alibi: fc.constantFrom(null, null, true),
  window: fc.constantFrom(null, null, null, [2, -1], [3, 1]),
}).filter((l) => l.h % l.rep === 0).chain((l) => ropeArb(l.dk).map((rope) => ({ ...l, rope })));
const callArb = fc.record({
  B: fc.integer({ min: 1, max: 2 }), T: fc.integer({ min: 1, max: 20 }), xseed: fc.nat(), causal: fc.boolean(),
  kpm: fc.boolean(), needWeights: fc.boolean(), amp: fc.constantFrom(1, 3),
});
const TOL = { atol: 2e-5, rtol: 1e-4 };

function kpmOf(B, T, rand) {
  const m = new Uint8Array(B * T);
  for (let i = 0; i < m.length; i++) m[i] = rand() < 0.3 ? 1 : 0;
  return m;
}

test('property: random layers with RoPE (both layouts, partial dims, GQA, masks, modifiers) match the float64 reference; the trace holds q and k after rotation', () => {
  fc.assert(fc.property(layerArb, callArb, (ld, c) => {
    const L = layerDesc(ld);
    const layer = mha.createLayer(L.opts);
    const { B, T } = c, d = L.d;
    const x = values(mulberry32(c.xseed), B * T * d, c.amp);
    const kpm = c.kpm ? kpmOf(B, T, mulberry32(c.xseed + 1)) : null;
    const ref = reference(L, slopesOf(layer), x, x, B, T, T, { causal: c.causal, kpm });
    const fwd = { causal: c.causal, needWeights: c.needWeights, ...(kpm ? { keyPaddingMask: { data: kpm, shape: [B, T] } } : {}) };
    const r = layer.forward({ data: x, shape: [B, T, d] }, fwd);
    assertClose(r.output, ref.output, TOL, 'output');
    if (c.needWeights) assertClose(r.weights, ref.weights, TOL, 'weights');
    if (B === 1) {
      const tr = layer.trace({ data: x, shape: [T, d] }, fwd);
      tr.heads.forEach((hd, i) => {
        const gi = Math.floor(i / (L.h / L.g));
        const q = new Float64Array(T * L.dk), k = new Float64Array(T * L.dk);
        for (let t = 0; t < T; t++) for (let e = 0; e < L.dk; e++) {
          q[t * L.dk + e] = ref.Q[(t * L.h + i) * L.dk + e];
          k[t * L.dk + e] = ref.K[(t * L.g + gi) * L.dk + e];
        }
        assertClose(hd.q, q, TOL, `traced q (after RoPE) of head ${i}`);
        assertClose(hd.k, k, TOL, `traced k (after RoPE) of head ${i}`);
        assertClose(hd.scores, ref.scores.subarray(i * T * T, (i + 1) * T * T), TOL, `traced scores of head ${i}`);
      });
      assertClose(tr.output, ref.output, TOL, 'traced output');
    }
    layer.dispose();
  }), fcParams());
});

test('property: RoPE on long key ranges (streaming path over several key blocks; packed path) matches the reference', () => {
  const arb = fc.record({
    T: fc.integer({ min: 65, max: 1100 }), seed: fc.nat(), xseed: fc.nat(), causal: fc.boolean(), interleaved: fc.boolean(),
    base: fc.constantFrom(100, 10000), alibi: fc.boolean(), window: fc.constantFrom(null, [200, 50]),
  });
  fc.assert(fc.property(arb, (a) => {
    const L = layerDesc({ dk: 4, h: 2, rep: 2, seed: a.seed, rope: { base: a.base, interleaved: a.interleaved }, alibi: a.alibi, window: a.window });
    const layer = mha.createLayer(L.opts);
    const x = values(mulberry32(a.xseed), a.T * L.d, 2);
    const ref = reference(L, slopesOf(layer), x, x, 1, a.T, a.T, { causal: a.causal });
    assertClose(layer.forward({ data: x, shape: [a.T, L.d] }, { causal: a.causal, needWeights: false }).output, ref.output, TOL, 'streaming output');
    if (a.T <= 300) assertClose(layer.forward({ data: x, shape: [a.T, L.d] }, { causal: a.causal }).output, ref.output, TOL, 'packed output');
    layer.dispose();
  }), fcParams({ numRuns: Math.max(5, Math.ceil(RUNS / 20)) }));
});

test('property: cross-attention with RoPE: queries and keys both at positions from 0 (Tq ≠ Tk, kDim ≠ dModel)', () => {
  const arb = fc.record({
    layer: layerArb, Tq: fc.integer({ min: 1, max: 80 }), Tk: fc.integer({ min: 1, max: 90 }), B: fc.integer({ min: 1, max: 2 }),
    xseed: fc.nat(), needWeights: fc.boolean(),
  });
  fc.assert(fc.property(arb, (a) => {
    const L = layerDesc({ ...a.layer, softcap: null, alibi: null, window: null, kdim: 5 });
    const layer = mha.createLayer(L.opts);
    const rand = mulberry32(a.xseed);
    const xq = values(rand, a.B * a.Tq * L.d, 2), xk = values(rand, a.B * a.Tk * 5, 2);
    const ref = reference(L, null, xq, xk, a.B, a.Tq, a.Tk);
    const kv = { data: xk, shape: [a.B, a.Tk, 5] };
    const r = layer.forward({ data: xq, shape: [a.B, a.Tq, L.d] }, { key: kv, value: kv, needWeights: a.needWeights });
    assertClose(r.output, ref.output, TOL, 'cross-attention output');
    layer.dispose();
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 4)) }));
});

test('property: RoPE scores depend only on i − j: shifting every position by s gives the same outputs and scores', () => {
  // Positions shift by s when s tokens are put before the sequence and masked as padding: query i and
  // key j move to i + s and j + s; with RoPE (and ALiBi, windows) only i − j enters the scores.
  const arb = fc.record({ layer: layerArb, T: fc.integer({ min: 1, max: 16 }), s: fc.integer({ min: 1, max: 40 }), xseed: fc.nat(), causal: fc.boolean() });
  fc.assert(fc.property(arb, (a) => {
    const L = layerDesc(a.layer);
    const layer = mha.createLayer(L.opts);
    const { T, s } = a, d = L.d, n = T + s;
    const rand = mulberry32(a.xseed);
    const pad = values(rand, s * d, 2), x = values(rand, T * d, 2);
    const xs = new Float32Array(n * d);
    xs.set(pad);
    xs.set(x, s * d);
    const kpm = new Uint8Array(n).fill(1, 0, s);
    const plain = layer.trace({ data: x, shape: [T, d] }, { causal: a.causal });
    const shifted = layer.trace({ data: xs, shape: [n, d] }, { causal: a.causal, keyPaddingMask: { data: kpm, shape: [n] } });
    assertClose(shifted.output.data.subarray(s * d), plain.output.data, TOL, `output shifted by ${s}`);
    for (let i = 0; i < L.h; i++) {
      const got = new Float32Array(T * T);
      for (let q = 0; q < T; q++) got.set(shifted.heads[i].scores.data.subarray((s + q) * n + s, (s + q) * n + s + T), q * T);
      assertClose(got, plain.heads[i].scores.data, { atol: 5e-5, rtol: 1e-4 }, `scores of head ${i} shifted by ${s}`);
    }
    layer.dispose();
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 4)) }));
});

test('property: rope dim 0, rope: false and no rope give the same results (bit for bit)', () => {
  fc.assert(fc.property(layerArb, callArb, (ld, c) => {
    const L0 = layerDesc({ ...ld, rope: null });
    const { B, T } = c, d = L0.d;
    const x = { data: values(mulberry32(c.xseed), B * T * d, c.amp), shape: [B, T, d] };
    const outs = [null, false, { dim: 0 }, { dim: 0, interleaved: true, base: 3 }].map((rope) => {
      const layer = mha.createLayer({ ...L0.opts, ...(rope === null ? {} : { rope }) });
      const r = layer.forward(x, { causal: c.causal });
      layer.dispose();
      return r;
    });
    for (const r of outs.slice(1)) {
      assertClose(r.output, outs[0].output.data, { atol: 0, rtol: 0 }, 'output');
      assertClose(r.weights, outs[0].weights.data, { atol: 0, rtol: 0 }, 'weights');
    }
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 4)) }));
});

test('property: with RoPE a KV-cache step equals the same rows of the full causal forward (keys cached rotated)', () => {
  checkCacheProperty(mha, layerArb, TOL);
});

test('RoPE rotates by position: one head, d_k = 2, q = k = (1, 0) gives scores cos((i − j)·θ⁰)/√2', () => {
  // W_Q = W_K = [[1, 0], [0, 0]] on x = (1, 0): q = k = (1, 0); pair 0 has frequency θ^0 = 1.
  const w = { data: Float32Array.of(1, 0, 0, 0), shape: [2, 2] };
  const layer = mha.createLayer({ dModel: 2, numHeads: 1, bias: false, rope: true, weights: { wQ: w, wK: w, wV: w, wO: w } });
  const T = 5;
  const x = { data: new Float32Array(T * 2).map((_, i) => (i % 2 === 0 ? 1 : 0)), shape: [T, 2] };
  const tr = layer.trace(x);
  for (let i = 0; i < T; i++) {
    assertClose(tr.heads[0].q.data.subarray(2 * i, 2 * i + 2), [Math.cos(i), Math.sin(i)], { atol: 1e-6, rtol: 0 }, `q at ${i}`);
    for (let j = 0; j < T; j++) assert.ok(Math.abs(tr.heads[0].scores.get(i, j) - Math.cos(i - j) / Math.SQRT2) < 1e-6, `S(${i}, ${j})`);
  }
  assert.deepEqual({ ...layer.config.rope }, { dim: 2, base: 10000, interleaved: false });
  layer.dispose();
});

test('RoPE in a per-head layer of unequal widths: each head rotates its own d_k by default; dim ≤ the smallest d_k', () => {
  const heads = [
    { wQ: { data: values(mulberry32(1), 6 * 4), shape: [6, 4] }, wK: { data: values(mulberry32(2), 6 * 4), shape: [6, 4] }, wV: { data: values(mulberry32(3), 6 * 3), shape: [6, 3] } },
    { wQ: { data: values(mulberry32(4), 6 * 2), shape: [6, 2] }, wK: { data: values(mulberry32(5), 6 * 2), shape: [6, 2] }, wV: { data: values(mulberry32(6), 6 * 2), shape: [6, 2] } },
  ];
  const wO = { data: values(mulberry32(7), 5 * 6), shape: [5, 6] };
  const x = { data: values(mulberry32(8), 4 * 6), shape: [4, 6] };
  const layer = mha.createLayer({ weights: { heads, wO }, rope: true });
  assert.equal(layer.config.rope.dim, -1);
  const tr = layer.trace(x);
  const plain = mha.createLayer({ weights: { heads, wO } }).trace(x);
  for (const [i, dk] of [[0, 4], [1, 2]]) {  // head i's q at position t: its whole d_k rotated (halves)
    const got = tr.heads[i].q.data, p = plain.heads[i].q.data;
    for (let t = 0; t < 4; t++) for (let e = 0; e < dk / 2; e++) {
      const ang = t * 10000 ** (-2 * e / dk), a = p[t * dk + e], b = p[t * dk + e + dk / 2];
      assert.ok(Math.abs(got[t * dk + e] - (a * Math.cos(ang) - b * Math.sin(ang))) < 1e-5, `head ${i} q[${t}, ${e}]`);
      assert.ok(Math.abs(got[t * dk + e + dk / 2] - (a * Math.sin(ang) + b * Math.cos(ang))) < 1e-5, `head ${i} q[${t}, ${e + dk / 2}]`);
    }
  }
  throwsMHA(() => mha.createLayer({ weights: { heads, wO }, rope: { dim: 4 } }), 'INVALID_CONFIG', [/rope\.dim/, /≤ dK = 2, got 4/]);
  // equal d_k, unequal d_v (a per-head layer, not uniform): the resolved dim is that d_k
  const heads2 = [heads[0], { ...heads[0], wV: heads[1].wV }];
  const l2 = mha.createLayer({ weights: { heads: heads2, wO: { data: values(mulberry32(7), 5 * 6), shape: [5, 6] } }, rope: true });
  assert.equal(l2.config.rope.dim, 4);
  l2.dispose();
  layer.dispose();
});

test('errors: bad rope values get an MHAError INVALID_CONFIG naming the option; the module keeps working', () => {
  const probe = stillWorksProbe(mha);
  const base = { dModel: 8, numHeads: 2, seed: 3 };  // dK = 4
  for (const dim of [1, 3, 5, 6, 8, -2]) {
    const e = throwsMHA(() => mha.createLayer({ ...base, rope: { dim } }), 'INVALID_CONFIG', [/rope\.dim/, /even integer ≥ 0 and ≤ dK/, new RegExp(`got ${dim}`)]);
    assert.equal(e.argument, 'rope.dim');
  }
  for (const dim of [1.5, '2', NaN, Infinity, null]) {
    const e = throwsMHA(() => mha.createLayer({ ...base, rope: { dim } }), 'INVALID_CONFIG', [/rope\.dim/]);
    assert.equal(e.argument, 'rope.dim');
  }
  for (const b of [1, 0.5, 0, -10, NaN, Infinity, -Infinity]) {
    const e = throwsMHA(() => mha.createLayer({ ...base, rope: { base: b } }), 'INVALID_CONFIG', [/rope\.base/, /finite number > 1/, new RegExp(`got ${String(b)}`)]);
    assert.equal(e.argument, 'rope.base');
  }
  for (const b of ['10000', null, [10000]]) {
    const e = throwsMHA(() => mha.createLayer({ ...base, rope: { base: b } }), 'INVALID_CONFIG', [/rope\.base/]);
    assert.equal(e.argument, 'rope.base');
  }
  let e = throwsMHA(() => mha.createLayer({ ...base, rope: { interleaved: 1 } }), 'INVALID_CONFIG', [/rope\.interleaved must be a boolean/]);
  assert.equal(e.argument, 'rope.interleaved');
  for (const r of ['yes', 1, null, [], [64]]) {
    e = throwsMHA(() => mha.createLayer({ ...base, rope: r }), 'INVALID_CONFIG', [/rope must be true, false or \{dim\?, base\?, interleaved\?\}/]);
    assert.equal(e.argument, 'rope');
  }
  e = throwsMHA(() => mha.createLayer({ ...base, rope: { theta: 10 } }), 'INVALID_CONFIG', [/rope has no option "theta"/]);
  assert.equal(e.argument, 'rope');
  // an odd d_k with the default dim: give an even dim
  e = throwsMHA(() => mha.createLayer({ dModel: 6, numHeads: 2, seed: 1, rope: true }), 'INVALID_CONFIG', [/dK = 3 of head 0 is odd/, /rope\.dim/]);
  assert.equal(e.argument, 'rope.dim');
  const ok = mha.createLayer({ dModel: 6, numHeads: 2, seed: 1, rope: { dim: 2 } });
  ok.dispose();
  // The passport refuses the same values (the same core rules).
  throwsMHA(() => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, rope: { dim: 3 } }), 'INVALID_CONFIG', [/rope\.dim/]);
  throwsMHA(() => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, rope: { base: 1 } }), 'INVALID_CONFIG', [/rope\.base/]);
  probe.check();
});

test('layer.config.rope is set only with RoPE, resolved; a KV cache inherits it', () => {
  const plain = mha.createLayer({ dModel: 8, numHeads: 2, seed: 3 });
  assert.equal('rope' in plain.config, false);
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 3, rope: { dim: 2, base: 500, interleaved: true } });
  assert.deepEqual({ ...l.config.rope }, { dim: 2, base: 500, interleaved: true });
  assert.deepEqual({ ...mha.createLayer({ dModel: 8, numHeads: 2, seed: 3, rope: {} }).config.rope }, { dim: 4, base: 10000, interleaved: false });
  // a cache step at position 3 after three tokens equals row 3 of the forward (rotated at position 3, not 0)
  const x = { data: values(mulberry32(9), 4 * 8, 2), shape: [4, 8] };
  const full = l.forward(x, { causal: true }).output.data;
  const cache = l.createKVCache({ maxLen: 4 });
  cache.step({ data: x.data.subarray(0, 24), shape: [3, 8] });
  assertClose(cache.step({ data: x.data.subarray(24), shape: [1, 8] }).output, full.subarray(24), TOL, 'step at position 3');
  plain.dispose();
  l.dispose();
});
