// Shared pieces of the property suites (tests/property*.test.mjs): fast-check settings, seeded
// data in every accepted input form, the float64 reference of multi-head attention written from
// the formula, the arbitraries of valid layers and calls, and checkCall (one call of a random valid
// layer against the reference).
//
//   head_i = softmax(Q_i·K_{g(i)}ᵀ·scale + M)·V_{g(i)},  out = concat(head_i)·W_O + b_O
// (Vaswani et al. 2017, eq. 1; g(i) = ⌊i / (h/g)⌋; masks as torch.nn.MultiheadAttention; a row
// whose keys are all masked has weights 0 and a zero attention output).
//
// FC_NUM_RUNS sets the runs per property (default 10,000, the CI setting); FC_SEED replays a
// failure (fast-check prints the seed and the counterexample's path).
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Tensor, mulberry32 } from '../../web/lib/src/index.js';
import { assertClose } from './golden.mjs';

export const RUNS = Number(process.env.FC_NUM_RUNS || 10000);
export const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
export const fcParams = (extra = {}) => ({ numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), ...extra });

// ---------------------------------------------------------------------------------------------
// Deterministic data from a seed (fast-check shrinks the sizes; the values follow the seed).

export const prng = mulberry32;
/** n float32-representable values uniform in [-amp, amp]. */
export function values(rand, n, amp = 1) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rand() - 1) * amp;
  return a;
}
/** [rows, cols] weights scaled like an init (|w| ≤ 1/√rows). */
export function weight(rand, rows, cols) { return values(rand, rows * cols, 1 / Math.sqrt(rows)); }

/** Row-major flat data -> nested arrays of the given shape. */
export function nest(data, shape) {
  if (shape.length === 0) return data[0];
  const stride = shape.slice(1).reduce((a, b) => a * b, 1);
  return Array.from({ length: shape[0] }, (_, i) => nest(data.subarray ? data.subarray(i * stride, (i + 1) * stride) : data.slice(i * stride, (i + 1) * stride), shape.slice(1)));
}
/** The same tensor in one of the accepted input forms. */
export function asInput(data, shape, form) {
  if (form === 0) return { data, shape };
  if (form === 1) return new Tensor(data, shape);
  if (form === 2) return nest(data, shape);
  return { data: Array.from(data), shape };  // plain number array data
}
export const sub = (data, rows, width, off, w) => {
  const out = new Float32Array(rows * w);
  for (let r = 0; r < rows; r++) out.set(data.subarray(r * width + off, r * width + off + w), r * w);
  return out;
};

// ---------------------------------------------------------------------------------------------
// The float64 reference, from the formula.

/**
 * @param {object} L {dModel, h, g, dk: number[], dv: number[], kDim, vDim, scale: number[], W:
 *   {wQ, wK, wV, wO, bQ?, bK?, bV?, bO?} packed [in, out] Float32Arrays}
 * @param {{B, Tq, Tk, q, k, v}} X inputs [B, T, width] Float32Array (k = v = q for self-attention)
 * @param {Float64Array|null} M additive mask [B, h, Tq, Tk] (-Infinity = masked) or null
 * @returns {{Q, K, V, S, A, C, out}} Float64Arrays: Q [B,Tq,Σdk], K [B,Tk,Σ_g dk], V, S scaled
 *   scores before masks [B,h,Tq,Tk], A weights [B,h,Tq,Tk], C concat [B,Tq,Σdv], out [B,Tq,dModel]
 */
export function reference(L, X, M) {
  const { h, g, dk, dv, W } = L;
  const { B, Tq, Tk } = X;
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  const qW = sum(dk), oW = sum(dv);
  const rep = h / g;
  const kvDk = Array.from({ length: g }, (_, j) => dk[j * rep]);
  const kvDv = Array.from({ length: g }, (_, j) => dv[j * rep]);
  const kW = sum(kvDk), vW = sum(kvDv);
  const offs = (a) => a.reduce((o, x, i) => (o.push(i ? o[i - 1] + a[i - 1] : 0), o), []);
  const qOff = offs(dk), oOff = offs(dv), kOff = offs(kvDk), vOff = offs(kvDv);
  const proj = (x, rows, inW, w, outW, b) => {
    const y = new Float64Array(rows * outW);
    for (let r = 0; r < rows; r++) {
      for (let o = 0; o < outW; o++) {
        let s = b ? b[o] : 0;
        for (let i = 0; i < inW; i++) s += x[r * inW + i] * w[i * outW + o];
        y[r * outW + o] = s;
      }
    }
    return y;
  };
  const Q = proj(X.q, B * Tq, L.dModel, W.wQ, qW, W.bQ);
  const K = proj(X.k, B * Tk, L.kDim, W.wK, kW, W.bK);
  const V = proj(X.v, B * Tk, L.vDim, W.wV, vW, W.bV);
  const S = new Float64Array(B * h * Tq * Tk), A = new Float64Array(B * h * Tq * Tk);
  const C = new Float64Array(B * Tq * oW);
  const row = new Float64Array(Tk);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < h; i++) {
      const gi = Math.floor(i / rep);
      for (let t = 0; t < Tq; t++) {
        const base = ((b * h + i) * Tq + t) * Tk;
        let mx = -Infinity;
        for (let j = 0; j < Tk; j++) {
          let d = 0;
          for (let c = 0; c < dk[i]; c++) d += Q[(b * Tq + t) * qW + qOff[i] + c] * K[(b * Tk + j) * kW + kOff[gi] + c];
          d *= L.scale[i];
          S[base + j] = d;
          row[j] = M ? d + M[base + j] : d;
          if (row[j] > mx) mx = row[j];
        }
        let z = 0;
        for (let j = 0; j < Tk; j++) z += (row[j] = mx === -Infinity ? 0 : Math.exp(row[j] - mx));
        for (let j = 0; j < Tk; j++) {
          const a = z > 0 ? row[j] / z : 0;
          A[base + j] = a;
          for (let c = 0; c < dv[i]; c++) C[(b * Tq + t) * oW + oOff[i] + c] += a * V[(b * Tk + j) * vW + vOff[gi] + c];
        }
      }
    }
  }
  const out = proj(C, B * Tq, oW, W.wO, L.dModel, W.bO);
  return { Q, K, V, S, A, C, out, qW, kW, vW, oW, qOff, oOff, kOff, vOff };
}

/** Tolerances of the comparisons with the reference (assertClose: |got − ref| ≤ atol + rtol·|ref|). */
export const TOL = { atol: 2e-4, rtol: 2e-4 };
export const TOL_SCORES = { atol: 5e-4, rtol: 5e-4 };
export const TOL_WEIGHTS = { atol: 2e-4, rtol: 0 };

// ---------------------------------------------------------------------------------------------
// Arbitraries of valid configurations and calls.

export const divisors = (n) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);

/** A layer description: packed (uniform, grouped-query) or per-head (uneven widths). */
export const layerArb = fc.oneof(
  { weight: 3, arbitrary: fc.record({
    h: fc.integer({ min: 1, max: 8 }),
    per: fc.integer({ min: 1, max: 8 }),        // d_model / h when dK is implicit
    dModel: fc.integer({ min: 1, max: 64 }),    // used when dK is explicit
    dK: fc.option(fc.integer({ min: 1, max: 12 }), { nil: 0, freq: 3 }),
    dV: fc.option(fc.integer({ min: 1, max: 12 }), { nil: 0, freq: 2 }),
    gPick: fc.nat(),
    bias: fc.boolean(),
    scale: fc.option(fc.constantFrom(0.05, 0.5, 1, 2), { nil: undefined, freq: 4 }),
  }).map((o) => {
    const dModel = o.dK ? o.dModel : o.h * o.per;
    const dk = o.dK || dModel / o.h;
    const dv = o.dV || dk;
    const gs = divisors(o.h);
    return { form: 'packed', dModel, h: o.h, g: gs[o.gPick % gs.length], dK: o.dK, dV: o.dV,
      dk: Array(o.h).fill(dk), dv: Array(o.h).fill(dv), bias: o.bias, scaleOpt: o.scale };
  }) },
  { weight: 1, arbitrary: fc.record({
    dModel: fc.integer({ min: 1, max: 24 }),
    dk: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 }),
    dvSeed: fc.nat(),
    bias: fc.boolean(),
    scale: fc.option(fc.constantFrom(0.25, 1), { nil: undefined, freq: 4 }),
  }).map((o) => {
    const r = prng(o.dvSeed);
    const dv = o.dk.map(() => 1 + Math.floor(r() * 6));
    return { form: 'perHead', dModel: o.dModel, h: o.dk.length, g: o.dk.length, dk: o.dk, dv, bias: o.bias, scaleOpt: o.scale };
  }) },
);

/** Builds createLayer options (in a random input form) and the reference's packed weights. */
export function buildLayer(d, cross, seed, form) {
  const rand = prng(seed);
  const { dModel, h, g, dk, dv } = d;
  const kDim = cross ? cross.kDim : dModel, vDim = cross ? cross.vDim : dModel;
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  const scale = dk.map((x) => d.scaleOpt || 1 / Math.sqrt(x));
  const opts = { numHeads: h, bias: d.bias };
  if (d.scaleOpt !== undefined) opts.scale = d.scaleOpt;
  if (cross) { opts.kDim = kDim; opts.vDim = vDim; }
  let W;
  if (d.form === 'packed') {
    opts.dModel = dModel;
    if (d.dK) opts.dK = d.dK;
    if (d.dV) opts.dV = d.dV;
    if (g !== h || rand() < 0.3) opts.kvHeads = g;
    const qW = sum(dk), kW = g * dk[0], vW = g * dv[0], oW = sum(dv);
    W = { wQ: weight(rand, dModel, qW), wK: weight(rand, kDim, kW), wV: weight(rand, vDim, vW), wO: weight(rand, oW, dModel) };
    if (d.bias) Object.assign(W, { bQ: values(rand, qW, 0.5), bK: values(rand, kW, 0.5), bV: values(rand, vW, 0.5), bO: values(rand, dModel, 0.5) });
    const shapes = { wQ: [dModel, qW], wK: [kDim, kW], wV: [vDim, vW], wO: [oW, dModel], bQ: [qW], bK: [kW], bV: [vW], bO: [dModel] };
    opts.weights = Object.fromEntries(Object.entries(W).map(([k, v]) => [k, asInput(v, shapes[k], form)]));
  } else {
    const heads = dk.map((k, i) => {
      const hd = { wQ: weight(rand, dModel, k), wK: weight(rand, kDim, k), wV: weight(rand, vDim, dv[i]) };
      if (d.bias) Object.assign(hd, { bQ: values(rand, k, 0.5), bK: values(rand, k, 0.5), bV: values(rand, dv[i], 0.5) });
      return hd;
    });
    const wO = weight(rand, sum(dv), dModel);
    const bO = d.bias ? values(rand, dModel, 0.5) : null;
    const pack = (key, rows, widths) => {
      const total = sum(widths), out = new Float32Array(rows * total);
      let off = 0;
      heads.forEach((hd, i) => {
        for (let r = 0; r < rows; r++) out.set(hd[key].subarray(r * widths[i], (r + 1) * widths[i]), r * total + off);
        off += widths[i];
      });
      return out;
    };
    W = { wQ: pack('wQ', dModel, dk), wK: pack('wK', kDim, dk), wV: pack('wV', vDim, dv), wO };
    if (d.bias) Object.assign(W, { bQ: pack('bQ', 1, dk), bK: pack('bK', 1, dk), bV: pack('bV', 1, dv), bO });
    opts.weights = {
      heads: heads.map((hd, i) => Object.fromEntries(Object.entries(hd).map(([k, v]) => {
        const shape = k === 'wQ' ? [dModel, dk[i]] : k === 'wK' ? [kDim, dk[i]] : k === 'wV' ? [vDim, dv[i]] : [v.length];
        return [k, asInput(v, shape, form)];
      }))),
      wO: asInput(wO, [sum(dv), dModel], form),
    };
    if (bO) opts.weights.bO = asInput(bO, [dModel], form);
  }
  return { opts, L: { dModel, h, g, dk, dv, kDim, vDim, scale, W } };
}

/** A call: sizes, masks of every kind, options. */
export const callArb = fc.record({
  B: fc.integer({ min: 1, max: 3 }),
  batched: fc.boolean(),
  Tq: fc.integer({ min: 1, max: 32 }),
  Tk: fc.integer({ min: 1, max: 32 }),
  cross: fc.option(fc.record({ kDim: fc.integer({ min: 1, max: 16 }), vDim: fc.integer({ min: 1, max: 16 }) }), { nil: null, freq: 3 }),
  causal: fc.boolean(),
  kpm: fc.constantFrom('none', 'none', 'bool', 'u8', 'additive', 'flat'),
  attn: fc.constantFrom('none', 'none', 'bool', 'boolPerHead', 'additive', 'additivePerHead', 'additive4d', 'u8'),
  maskDensity: fc.constantFrom(0.1, 0.3, 0.6, 1),
  mode: fc.constantFrom('forward', 'forward', 'noWeights', 'average', 'trace'),
  inputForm: fc.integer({ min: 0, max: 3 }),
  weightForm: fc.integer({ min: 0, max: 3 }),
  amp: fc.constantFrom(0.1, 1, 3),
  seed: fc.integer(),
});

/** Makes the masks of a call in API form and their combined float64 [B, h, Tq, Tk] effect. */
export function buildMasks(c, h, rand) {
  const { B, Tq, Tk } = c;
  const batched = c.batched || B > 1;
  let M = null;
  const addM = (b, i, t, j, v) => {
    if (!M) M = new Float64Array(B * h * Tq * Tk);
    M[((b * h + i) * Tq + t) * Tk + j] += v;
  };
  const opts = {};
  const pick = () => rand() < c.maskDensity * 0.5;
  const addVal = () => {
    const r = rand();
    return r < 0.25 ? -Infinity : r < 0.4 ? -100 : Math.fround((rand() * 2 - 1) * 2);
  };
  if (c.kpm !== 'none') {
    const n = B * Tk;
    const shape = batched ? [B, Tk] : (rand() < 0.5 ? [Tk] : [1, Tk]);
    if (c.kpm === 'additive') {
      const data = new Float32Array(n);
      for (let x = 0; x < n; x++) data[x] = pick() ? addVal() : 0;
      opts.keyPaddingMask = rand() < 0.5 ? nest(Array.from(data), shape) : { data, shape };
      for (let b = 0; b < B; b++) for (let j = 0; j < Tk; j++) if (data[b * Tk + j]) for (let i = 0; i < h; i++) for (let t = 0; t < Tq; t++) addM(b, i, t, j, data[b * Tk + j]);
    } else {
      const data = new Uint8Array(n);
      for (let x = 0; x < n; x++) data[x] = pick() ? 1 : 0;
      opts.keyPaddingMask = c.kpm === 'u8' ? { data, shape } : c.kpm === 'flat' ? { data: Array.from(data, Boolean), shape } : nest(Array.from(data, Boolean), shape);
      for (let b = 0; b < B; b++) for (let j = 0; j < Tk; j++) if (data[b * Tk + j]) for (let i = 0; i < h; i++) for (let t = 0; t < Tq; t++) addM(b, i, t, j, -Infinity);
    }
  }
  if (c.attn !== 'none') {
    const perHead = c.attn === 'boolPerHead' || c.attn === 'additivePerHead' || c.attn === 'additive4d';
    const n = (perHead ? B * h : 1) * Tq * Tk;
    const shape = c.attn === 'additive4d' ? [B, h, Tq, Tk] : perHead ? [B * h, Tq, Tk] : [Tq, Tk];
    const isBool = c.attn === 'bool' || c.attn === 'boolPerHead' || c.attn === 'u8';
    const data = isBool ? new Uint8Array(n) : new Float32Array(n);
    for (let x = 0; x < n; x++) data[x] = pick() ? (isBool ? 1 : addVal()) : 0;
    if (c.attn === 'u8') opts.attnMask = { data, shape };
    else if (isBool) opts.attnMask = nest(Array.from(data, Boolean), shape);
    else opts.attnMask = rand() < 0.5 ? { data, shape } : rand() < 0.5 ? new Tensor(data, shape) : nest(Array.from(data), shape);
    for (let b = 0; b < B; b++) {
      for (let i = 0; i < h; i++) {
        for (let t = 0; t < Tq; t++) {
          for (let j = 0; j < Tk; j++) {
            const v = data[(perHead ? (b * h + i) * Tq + t : t) * Tk + j];
            if (v) addM(b, i, t, j, isBool ? -Infinity : v);
          }
        }
      }
    }
  }
  if (c.causal) {
    opts.causal = true;
    for (let b = 0; b < B; b++) for (let i = 0; i < h; i++) for (let t = 0; t < Tq; t++) for (let j = t + 1; j < Tk; j++) addM(b, i, t, j, -Infinity);
  } else if (rand() < 0.3) {
    opts.causal = false;
  }
  return { opts, M };
}

/**
 * Runs one random valid call `c` (callArb) on a layer built from `d` (layerArb) in module `mha`
 * and asserts output, weights (per head or averaged) or the trace against the float64 reference.
 */
export function checkCall(mha, d, c) {
  const rand = prng(c.seed ^ 0x5bd1e995);
  const { opts: layerOpts, L } = buildLayer(d, c.cross, c.seed, c.weightForm);
  const { B } = c;
  const batched = c.batched || B > 1;
  const Tk = c.cross ? c.Tk : c.Tq;
  const call = { ...c, Tk };
  const q = values(rand, B * c.Tq * L.dModel, c.amp);
  const k = c.cross ? values(rand, B * Tk * L.kDim, c.amp) : q;
  const v = c.cross ? values(rand, B * Tk * L.vDim, c.amp) : q;
  const lead = batched ? [B] : [];
  const { opts, M } = buildMasks(call, L.h, rand);
  if (c.cross) {
    opts.key = asInput(k, [...lead, Tk, L.kDim], c.inputForm);
    if (c.cross.vDim !== c.cross.kDim || rand() < 0.8) opts.value = asInput(v, [...lead, Tk, L.vDim], c.inputForm);
  }
  const vv = c.cross && !opts.value ? k : v;   // value defaults to the key (only when kDim = vDim)
  const ref = reference(L, { B, Tq: c.Tq, Tk, q, k, v: vv }, M);
  const layer = mha.createLayer(layerOpts);
  try {
    assert.equal(layer.config.numHeads, L.h);
    assert.equal(layer.config.kvHeads, L.g);
    const query = asInput(q, [...lead, c.Tq, L.dModel], c.inputForm);
    const h = L.h, Tq = c.Tq;
    if (c.mode === 'trace') {
      const tr = layer.trace(query, opts);
      assert.equal(tr.heads.length, h);
      for (let i = 0; i < h; i++) {
        const hd = tr.heads[i];
        const gi = Math.floor(i / (h / L.g));
        assert.deepEqual(hd.q.shape, [...lead, Tq, L.dk[i]]);
        assert.deepEqual(hd.v.shape, [...lead, Tk, L.dv[i]]);
        assertClose(hd.q.data, sub(Float32Array.from(ref.Q), B * Tq, ref.qW, ref.qOff[i], L.dk[i]), TOL, `trace head ${i} q`);
        assertClose(hd.k.data, sub(Float32Array.from(ref.K), B * Tk, ref.kW, ref.kOff[gi], L.dk[i]), TOL, `trace head ${i} k`);
        assertClose(hd.v.data, sub(Float32Array.from(ref.V), B * Tk, ref.vW, ref.vOff[gi], L.dv[i]), TOL, `trace head ${i} v`);
        const plane = (X) => { const o = new Float64Array(B * Tq * Tk); for (let b = 0; b < B; b++) o.set(X.subarray((b * h + i) * Tq * Tk, (b * h + i + 1) * Tq * Tk), b * Tq * Tk); return o; };
        assertClose(hd.scores.data, plane(ref.S), TOL_SCORES, `trace head ${i} scores`);
        assertClose(hd.weights.data, plane(ref.A), TOL_WEIGHTS, `trace head ${i} weights`);
        assertClose(hd.output.data, sub(Float32Array.from(ref.C), B * Tq, ref.oW, ref.oOff[i], L.dv[i]), TOL, `trace head ${i} output`);
      }
      assert.deepEqual(tr.concat.shape, [...lead, Tq, ref.oW]);
      assertClose(tr.concat.data, ref.C, TOL, 'trace concat');
      assertClose(tr.output.data, ref.out, TOL, 'trace output');
      return;
    }
    if (c.mode === 'noWeights') opts.needWeights = false;
    if (c.mode === 'average') opts.averageWeights = true;
    const r = layer.forward(query, opts);
    assert.deepEqual(r.output.shape, [...lead, Tq, L.dModel]);
    assertClose(r.output.data, ref.out, TOL, 'output');
    if (c.mode === 'noWeights') {
      assert.equal(r.weights, undefined);
    } else if (c.mode === 'average') {
      assert.deepEqual(r.weights.shape, [...lead, Tq, Tk]);
      const avg = new Float64Array(B * Tq * Tk);
      for (let b = 0; b < B; b++) for (let i = 0; i < h; i++) for (let x = 0; x < Tq * Tk; x++) avg[b * Tq * Tk + x] += ref.A[(b * h + i) * Tq * Tk + x] / h;
      assertClose(r.weights.data, avg, TOL_WEIGHTS, 'averaged weights');
    } else {
      assert.deepEqual(r.weights.shape, [...lead, h, Tq, Tk]);
      assertClose(r.weights.data, ref.A, TOL_WEIGHTS, 'weights');
      // Rows sum to 1, or are all 0 when every key is masked (never NaN).
      for (let row = 0; row < B * h * Tq; row++) {
        let s = 0;
        for (let j = 0; j < Tk; j++) s += r.weights.data[row * Tk + j];
        assert.ok(Math.abs(s - 1) < 1e-4 || s === 0, `weights row ${row} sums to ${s}`);
      }
    }
  } finally {
    layer.dispose();
  }
}
