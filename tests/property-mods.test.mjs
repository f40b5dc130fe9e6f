// Property tests of the score modifiers (softcap, ALiBi, sliding window) with fast-check, and their
// errors. A float64 reference written here from the papers:
//   S = Q_i·K_gᵀ·scale;  S ← cap·tanh(S / cap) (Gemma 2);  S ← S − m_i·|p_q − j| (Press et al. 2022);
//   masked: causal j > p_q, window j < p_q − left or j > p_q + right (−1 unbounded; Beltagy et al.
//   2020, Mistral), padded keys;  A = softmax (rows with every key masked → 0);  out = concat(A·V)·W_O + b_O
// Properties: random layers and calls (every option with causal / key padding / GQA / batches /
// needWeights / the streaming path) match the reference; slopes of zero equal no ALiBi; a window of
// [T, T] equals full attention; a cap far above the scores changes nothing beyond float tolerance; a
// KV-cache step equals the same rows of the full forward for every option; ALiBi's bias depends only
// on the distance i − j (shifting both positions gives the same bias).
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

/** The float64 reference: x [B, T, d] → {output [B, T, d], weights [B, h, T, T]}; offset: query positions. */
function reference(L, slopes, x, B, T, { causal = false, kpm = null, softcap = null, window = null, tq = T, q0 = 0 } = {}) {
  const { d, h, g, dk, w } = L;
  const lin = (X, rows, W, b, n) => {
    const Y = new Float64Array(rows * n);
    for (let r = 0; r < rows; r++) for (let c = 0; c < n; c++) {
      let s = b[c];
      for (let k = 0; k < d; k++) s += X[r * d + k] * W[k * n + c];
      Y[r * n + c] = s;
    }
    return Y;
  };
  const Q = lin(x, B * T, w.wQ, w.bQ, h * dk), K = lin(x, B * T, w.wK, w.bK, g * dk), V = lin(x, B * T, w.wV, w.bV, g * dk);
  const out = new Float64Array(B * tq * d), A = new Float64Array(B * h * tq * T);
  const scale = 1 / Math.sqrt(dk);
  for (let b = 0; b < B; b++) {
    const cat = new Float64Array(tq * h * dk);
    for (let i = 0; i < h; i++) {
      const gi = Math.floor(i / (h / g));
      for (let qi = 0; qi < tq; qi++) {
        const p = q0 + qi;  // the query's position
        const S = new Float64Array(T);
        const m = new Array(T).fill(false);
        for (let j = 0; j < T; j++) {
          let s = 0;
          for (let k = 0; k < dk; k++) s += Q[(b * T + p) * h * dk + i * dk + k] * K[(b * T + j) * g * dk + gi * dk + k];
          s *= scale;
          if (softcap !== null) s = softcap * Math.tanh(s / softcap);
          if (slopes) s -= slopes[i] * Math.abs(p - j);
          S[j] = s;
          m[j] = (causal && j > p) || (kpm && kpm[b * T + j]) ||
            (window && window[0] >= 0 && j < p - window[0]) || (window && window[1] >= 0 && j > p + window[1]);
        }
        let mx = -Infinity;
        for (let j = 0; j < T; j++) if (!m[j]) mx = Math.max(mx, S[j]);
        let sum = 0;
        const P = new Float64Array(T);
        if (mx > -Infinity) for (let j = 0; j < T; j++) { P[j] = m[j] ? 0 : Math.exp(S[j] - mx); sum += P[j]; }
        for (let j = 0; j < T; j++) {
          const a = sum > 0 ? P[j] / sum : 0;
          A[((b * h + i) * tq + qi) * T + j] = a;
          for (let k = 0; k < dk; k++) cat[qi * h * dk + i * dk + k] += a * V[(b * T + j) * g * dk + gi * dk + k];
        }
      }
    }
    for (let qi = 0; qi < tq; qi++) for (let c = 0; c < d; c++) {
      let s = w.bO[c];
      for (let k = 0; k < h * dk; k++) s += cat[qi * h * dk + k] * w.wO[k * d + c];
      out[(b * tq + qi) * d + c] = s;
    }
  }
  return { output: out, weights: A };
}

const modsArb = fc.record({
  softcap: fc.oneof(fc.constant(null), fc.double({ min: 0.25, max: 20, noNaN: true }).map(Math.fround)),
  alibi: fc.oneof(fc.constant(null), fc.constant(true), fc.constant('given')),
  window: fc.oneof(fc.constant(null), fc.tuple(fc.integer({ min: -1, max: 8 }), fc.integer({ min: -1, max: 8 }))),
});
const layerArb = fc.record({
  dk: fc.integer({ min: 1, max: 6 }), h: fc.constantFrom(1, 2, 3, 4, 6), repIdx: fc.nat(3), seed: fc.nat(),
  mods: modsArb, slopeSeed: fc.nat(),
}).map((a) => {
  const reps = [1, 2, 3, 6].filter((r) => a.h % r === 0);
  const rep = reps[a.repIdx % reps.length];
  const alibi = a.mods.alibi === 'given' ? Array.from(values(mulberry32(a.slopeSeed), a.h, 1)) : a.mods.alibi;
  return { dk: a.dk, h: a.h, rep, seed: a.seed, softcap: a.mods.softcap, alibi, window: a.mods.window };
});
const callArb = fc.record({
  B: fc.integer({ min: 1, max: 3 }), T: fc.integer({ min: 1, max: 20 }), causal: fc.boolean(), pad: fc.boolean(),
  xseed: fc.nat(), amp: fc.constantFrom(0.5, 2, 4),
});

function slopesOf(layer) { return layer.config.alibiSlopes ? Array.from(layer.config.alibiSlopes) : null; }

function checkCall(desc, c) {
  const L = layerDesc(desc);
  const layer = mha.createLayer(L.opts);
  try {
    const x = values(mulberry32(c.xseed), c.B * c.T * L.d, c.amp);
    let kpm = null;
    if (c.pad) {
      kpm = new Uint8Array(c.B * c.T);
      const r = mulberry32(c.xseed + 1);
      for (let i = 0; i < kpm.length; i++) kpm[i] = r() < 0.3 ? 1 : 0;
    }
    const ref = reference(L, slopesOf(layer), x, c.B, c.T, { causal: c.causal, kpm, softcap: desc.softcap, window: desc.window });
    const opts = { causal: c.causal, ...(kpm ? { keyPaddingMask: { data: kpm, shape: [c.B, c.T] } } : {}) };
    const r = layer.forward({ data: x, shape: [c.B, c.T, L.d] }, opts);
    const tol = { atol: 2e-5, rtol: 1e-4 };
    assertClose(r.output, ref.output, tol, 'output');
    assertClose(r.weights, ref.weights, tol, 'weights');
    const nw = layer.forward({ data: x, shape: [c.B, c.T, L.d] }, { ...opts, needWeights: false });
    assertClose(nw.output, ref.output, tol, 'output without weights');
  } finally {
    layer.dispose();
  }
}

test('property: random layers with softcap / ALiBi / window match the float64 reference', () => {
  fc.assert(fc.property(layerArb, callArb, (d, c) => { checkCall(d, c); }), fcParams());
});

test('property: long key ranges with modifiers (streaming path, several key blocks; packed path) match the reference', () => {
  const arb = fc.record({
    T: fc.integer({ min: 65, max: 1100 }), seed: fc.nat(), xseed: fc.nat(), causal: fc.boolean(),
    left: fc.integer({ min: -1, max: 700 }), right: fc.integer({ min: -1, max: 700 }), softcap: fc.boolean(), alibi: fc.boolean(),
  });
  fc.assert(fc.property(arb, (a) => {
    const desc = { dk: 2, h: 2, rep: 2, seed: a.seed, softcap: a.softcap ? 3 : null, alibi: a.alibi ? true : null, window: [a.left, a.right] };
    const L = layerDesc(desc);
    const layer = mha.createLayer(L.opts);
    const x = values(mulberry32(a.xseed), a.T * L.d, 2);
    const ref = reference(L, slopesOf(layer), x, 1, a.T, { causal: a.causal, softcap: desc.softcap, window: desc.window });
    const tol = { atol: 2e-5, rtol: 1e-4 };
    assertClose(layer.forward({ data: x, shape: [a.T, L.d] }, { causal: a.causal, needWeights: false }).output, ref.output, tol, 'streaming output');
    if (a.T <= 300) assertClose(layer.forward({ data: x, shape: [a.T, L.d] }, { causal: a.causal }).output, ref.output, tol, 'packed output');
    layer.dispose();
  }), fcParams({ numRuns: Math.max(5, Math.ceil(RUNS / 20)) }));
});

/** Output of a layer (options `extra` added to desc's) on x. */
function run(desc, extra, x, shape, fwd = {}) {
  const L = layerDesc(desc);
  const layer = mha.createLayer({ ...L.opts, ...extra });
  const r = layer.forward({ data: x, shape }, fwd);
  layer.dispose();
  return r;
}

test('property: slopes of zero equal no ALiBi; a window of [T, T] equals full attention; a far cap changes nothing', () => {
  fc.assert(fc.property(layerArb, callArb, (d, c) => {
    const base = { ...d, softcap: null, alibi: null, window: null };
    const L = layerDesc(base);
    const x = values(mulberry32(c.xseed), c.B * c.T * L.d, c.amp);
    const shape = [c.B, c.T, L.d];
    const fwd = { causal: c.causal };
    const plain = run(base, {}, x, shape, fwd);
    const zero = run(base, { alibiSlopes: new Float32Array(d.h) }, x, shape, fwd);
    assertClose(zero.output, plain.output.data, { atol: 1e-6, rtol: 1e-6 }, 'zero slopes: output');
    assertClose(zero.weights, plain.weights.data, { atol: 1e-6, rtol: 1e-6 }, 'zero slopes: weights');
    const full = run(base, { window: [c.T, c.T] }, x, shape, fwd);
    assertClose(full.output, plain.output.data, { atol: 1e-6, rtol: 1e-6 }, 'window [T, T]: output');
    assertClose(full.weights, plain.weights.data, { atol: 1e-6, rtol: 1e-6 }, 'window [T, T]: weights');
    const capped = run(base, { softcap: 1e4 }, x, shape, fwd);  // |S| ≲ 50 here: relative change ≤ S²/(3·cap²) < 1e-5
    assertClose(capped.output, plain.output.data, { atol: 2e-5, rtol: 1e-4 }, 'far cap: output');
    assertClose(capped.weights, plain.weights.data, { atol: 2e-5, rtol: 1e-4 }, 'far cap: weights');
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 4)) }));
});

test('property: a KV-cache step equals the same rows of the full causal forward, for every option', () => {
  checkCacheProperty(mha, layerArb, { atol: 1e-5, rtol: 1e-4 });
});

test('property: ALiBi depends only on the distance: bias(i + s, j + s) = bias(i, j) = −m·|i − j|', () => {
  const arb = fc.record({ layer: layerArb, T: fc.integer({ min: 2, max: 16 }), xseed: fc.nat() });
  fc.assert(fc.property(arb, (a) => {
    const base = { ...a.layer, softcap: null, window: null, alibi: null };
    const L = layerDesc(base);
    const x = values(mulberry32(a.xseed), a.T * L.d, 1);
    const plain = mha.createLayer(L.opts), alibi = mha.createLayer({ ...L.opts, alibi: true });
    const t0 = plain.trace({ data: x, shape: [a.T, L.d] }), t1 = alibi.trace({ data: x, shape: [a.T, L.d] });
    const m = alibi.config.alibiSlopes, T = a.T;
    for (let i = 0; i < L.h; i++) {
      const bias = (q, k) => t1.heads[i].scores.data[q * T + k] - t0.heads[i].scores.data[q * T + k];
      for (let q = 0; q < T; q++) for (let k = 0; k < T; k++) {
        assert.ok(Math.abs(bias(q, k) + m[i] * Math.abs(q - k)) <= 1e-5 * (1 + m[i] * T), `bias(${q}, ${k}) of head ${i}`);
        if (q + 1 < T && k + 1 < T) assert.ok(Math.abs(bias(q + 1, k + 1) - bias(q, k)) <= 2e-5 * (1 + m[i] * T), `shift of (${q}, ${k})`);
      }
    }
    plain.dispose();
    alibi.dispose();
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 4)) }));
});

test('ALiBi default slopes: the paper\'s geometric sequence for powers of two, interleaved extras otherwise', () => {
  const slopes = (h) => {
    const layer = mha.createLayer({ dModel: 2 * h, numHeads: h, seed: 1, alibi: true });
    const s = Array.from(layer.config.alibiSlopes);
    layer.dispose();
    return s;
  };
  // Press et al. 2022: h = 8 → 1/2, 1/4, …, 1/256; h = 4 → 1/4, 1/16, 1/64, 1/256
  assert.deepEqual(slopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
  assert.deepEqual(slopes(4), [1 / 4, 1 / 16, 1 / 64, 1 / 256]);
  // h = 6: the 4-head slopes, then slopes 1 and 3 (0-based 0, 2) of the 8-head sequence
  assert.deepEqual(slopes(6), [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]);
  assert.deepEqual(slopes(1), [1 / 256]);
  const s12 = slopes(12);
  assert.equal(s12.length, 12);
  assertClose(s12.slice(8), [2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5].map(Math.fround), { atol: 0, rtol: 0 }, 'h = 12 extras');
});

test('errors: bad softcap, alibi, alibiSlopes and window values get an MHAError naming the option; the module keeps working', () => {
  const probe = stillWorksProbe(mha);
  const base = { dModel: 8, numHeads: 2, seed: 3 };
  for (const v of [0, -1, NaN, Infinity, -Infinity]) {
    const e = throwsMHA(() => mha.createLayer({ ...base, softcap: v }), 'INVALID_CONFIG', [/softcap/, /> 0/, new RegExp(`got ${String(v)}`)]);
    assert.equal(e.argument, 'softcap');
  }
  throwsMHA(() => mha.createLayer({ ...base, softcap: '30' }), 'INVALID_CONFIG', [/softcap/, /"30"/]);
  throwsMHA(() => mha.createLayer({ ...base, alibi: 1 }), 'INVALID_CONFIG', [/alibi must be a boolean/]);
  let e = throwsMHA(() => mha.createLayer({ ...base, alibiSlopes: [0.5, 0.25, 0.1] }), 'INVALID_CONFIG',
    [/alibiSlopes/, /expected numHeads = 2 slopes, got 3/]);
  assert.equal(e.argument, 'alibiSlopes');
  throwsMHA(() => mha.createLayer({ ...base, numHeads: 4, alibiSlopes: new Float32Array(6) }), 'INVALID_CONFIG', [/expected numHeads = 4 slopes, got 6/]);
  throwsMHA(() => mha.createLayer({ ...base, alibiSlopes: [] }), 'INVALID_CONFIG', [/expected numHeads = 2 slopes, got 0/]);
  e = throwsMHA(() => mha.createLayer({ ...base, alibiSlopes: [0.5, NaN] }), 'INVALID_CONFIG', [/alibiSlopes\[1\] must be a finite number, got NaN/]);
  assert.equal(e.argument, 'alibiSlopes');
  throwsMHA(() => mha.createLayer({ ...base, alibiSlopes: ['a', 1] }), 'INVALID_CONFIG', [/alibiSlopes must be an array/]);
  throwsMHA(() => mha.createLayer({ ...base, alibi: false, alibiSlopes: [1, 2] }), 'INVALID_CONFIG', [/alibi: false/]);
  for (const w of [[-2, 0], [0, -5], [-3, -3]]) {
    e = throwsMHA(() => mha.createLayer({ ...base, window: w }), 'INVALID_CONFIG', [/window/, /≥ 0 or −1/, new RegExp(`got \\[${w[0]}, ${w[1]}\\]`)]);
    assert.equal(e.argument, 'window');
  }
  for (const w of [[1], [1, 2, 3], [1.5, 0], 3, '1,2', [0, NaN], null]) {
    throwsMHA(() => mha.createLayer({ ...base, window: w }), 'INVALID_CONFIG', [/window must be \[left, right\]/]);
  }
  // The passport refuses the same values (the same core rules).
  throwsMHA(() => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, softcap: 0 }), 'INVALID_CONFIG', [/softcap/]);
  throwsMHA(() => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, alibiSlopes: [1] }), 'INVALID_CONFIG', [/alibiSlopes/]);
  throwsMHA(() => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, window: [-2, 1] }), 'INVALID_CONFIG', [/window/]);
  probe.check();
});

test('the resolved modifiers are on layer.config (only when set); a KV cache inherits them', () => {
  const plain = mha.createLayer({ dModel: 8, numHeads: 2, seed: 3 });
  assert.equal('softcap' in plain.config || 'alibiSlopes' in plain.config || 'window' in plain.config, false);
  const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 3, softcap: 50, alibiSlopes: [0.5, 0.25], window: [4, 0] });
  assert.equal(l.config.softcap, 50);
  assert.deepEqual(Array.from(l.config.alibiSlopes), [0.5, 0.25]);
  assert.deepEqual(l.config.window, [4, 0]);
  plain.dispose();
  l.dispose();
});

test('property: in cross-attention (Tq ≠ Tk, packed K/V) a window equals its boolean attnMask and ALiBi its additive per-head attnMask', () => {
  const arb = fc.record({
    Tq: fc.integer({ min: 1, max: 90 }), Tk: fc.integer({ min: 1, max: 140 }), B: fc.integer({ min: 1, max: 2 }),
    left: fc.integer({ min: -1, max: 50 }), right: fc.integer({ min: -1, max: 50 }), seed: fc.nat(), causal: fc.boolean(),
  });
  fc.assert(fc.property(arb, (a) => {
    const d = 8, h = 2, rand = mulberry32(a.seed);
    const q = { data: values(rand, a.B * a.Tq * d), shape: [a.B, a.Tq, d] };
    const kv = { data: values(rand, a.B * a.Tk * d), shape: [a.B, a.Tk, d] };
    const base = { dModel: d, numHeads: h, seed: a.seed % 1000 };
    const plain = mha.createLayer(base);
    const win = mha.createLayer({ ...base, window: [a.left, a.right] });
    const slopes = [0.3, 0.05];
    const alibi = mha.createLayer({ ...base, alibiSlopes: slopes });
    const fwd = { key: kv, value: kv, causal: a.causal };
    const mask = new Uint8Array(a.Tq * a.Tk), add = new Float32Array(a.B * h * a.Tq * a.Tk);
    for (let i = 0; i < a.Tq; i++) for (let j = 0; j < a.Tk; j++) {
      mask[i * a.Tk + j] = (a.left >= 0 && j < i - a.left) || (a.right >= 0 && j > i + a.right) ? 1 : 0;
      for (let b = 0; b < a.B; b++) for (let k = 0; k < h; k++) add[((b * h + k) * a.Tq + i) * a.Tk + j] = -slopes[k] * Math.abs(i - j);
    }
    const tol = { atol: 1e-5, rtol: 1e-4 };
    const w1 = win.forward(q, fwd), w0 = plain.forward(q, { ...fwd, attnMask: { data: mask, shape: [a.Tq, a.Tk] } });
    assertClose(w1.output, w0.output.data, tol, 'window output');
    assertClose(w1.weights, w0.weights.data, tol, 'window weights');
    assertClose(win.forward(q, { ...fwd, needWeights: false }).output, w0.output.data, tol, 'window output without weights');
    const a1 = alibi.forward(q, fwd), a0 = plain.forward(q, { ...fwd, attnMask: { data: add, shape: [a.B * h, a.Tq, a.Tk] } });
    assertClose(a1.output, a0.output.data, tol, 'ALiBi output');
    assertClose(a1.weights, a0.weights.data, tol, 'ALiBi weights');
    for (const l of [plain, win, alibi]) l.dispose();
  }), fcParams({ numRuns: Math.max(10, Math.ceil(RUNS / 4)) }));
});
