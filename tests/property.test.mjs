// Property-based tests of the JS API with fast-check.
//
//  1. Random valid layers and calls (dModel 1–64, heads dividing it, kvHeads dividing heads,
//     per-head uneven widths, self- and cross-attention with Tq ≠ Tk, batch 1–3 or unbatched,
//     causal / key-padding / boolean / additive / per-head masks, needWeights, averageWeights,
//     trace) agree with a plain float64 reference written here from the formula
//       head_i = softmax(Q_i·K_{g(i)}ᵀ·scale + M)·V_{g(i)},  out = concat(head_i)·W_O + b_O
//     (Vaswani et al. 2017, eq. 1; g(i) = ⌊i / (h/g)⌋; masks as torch.nn.MultiheadAttention; a row
//     whose keys are all masked has weights 0 and a zero attention output).
//  2. Long key ranges (Tk 513..1100, no weights: the streaming online-softmax path over several key
//     blocks) agree with the reference.
//  3. A KV cache fed a sequence in random chunks reproduces causal self-attention.
//  4. Random invalid calls each throw an MHAError with the documented code (never a RangeError,
//     a wasm RuntimeError/abort or a silent NaN), and the same module instance then still
//     computes a probe forward bit for bit as before.
//
// FC_NUM_RUNS sets the runs per property (default 10,000, the CI setting); FC_SEED replays a
// failure (fast-check prints the seed and the counterexample's path).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMHA, MHAError, Tensor, mulberry32 } from '../web/lib/src/index.js';
import { tierOptions } from './helpers/tier.mjs';
import { assertClose } from './helpers/golden.mjs';
import { throwsMHA, stillWorksProbe } from './helpers/errors.mjs';

const RUNS = Number(process.env.FC_NUM_RUNS || 10000);
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const fcParams = (extra = {}) => ({ numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), ...extra });

const mha = await createMHA(tierOptions());
const runsDone = {};  // property name -> runs executed (printed at the end)

// ---------------------------------------------------------------------------------------------
// Deterministic data from a seed (fast-check shrinks the sizes; the values follow the seed).

const prng = mulberry32;
/** n float32-representable values uniform in [-amp, amp]. */
function values(rand, n, amp = 1) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (2 * rand() - 1) * amp;
  return a;
}
/** [rows, cols] weights scaled like an init (|w| ≤ 1/√rows). */
function weight(rand, rows, cols) { return values(rand, rows * cols, 1 / Math.sqrt(rows)); }

/** Row-major flat data -> nested arrays of the given shape. */
function nest(data, shape) {
  if (shape.length === 0) return data[0];
  const stride = shape.slice(1).reduce((a, b) => a * b, 1);
  return Array.from({ length: shape[0] }, (_, i) => nest(data.subarray ? data.subarray(i * stride, (i + 1) * stride) : data.slice(i * stride, (i + 1) * stride), shape.slice(1)));
}
/** The same tensor in one of the accepted input forms. */
function asInput(data, shape, form) {
  if (form === 0) return { data, shape };
  if (form === 1) return new Tensor(data, shape);
  if (form === 2) return nest(data, shape);
  return { data: Array.from(data), shape };  // plain number array data
}
const sub = (data, rows, width, off, w) => {
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
function reference(L, X, M) {
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
const TOL = { atol: 2e-4, rtol: 2e-4 };
const TOL_SCORES = { atol: 5e-4, rtol: 5e-4 };
const TOL_WEIGHTS = { atol: 2e-4, rtol: 0 };

// ---------------------------------------------------------------------------------------------
// Arbitraries of valid configurations and calls.

const divisors = (n) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);

/** A layer description: packed (uniform, grouped-query) or per-head (uneven widths). */
const layerArb = fc.oneof(
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
function buildLayer(d, cross, seed, form) {
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
const callArb = fc.record({
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
function buildMasks(c, h, rand) {
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

function checkCall(d, c) {
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

test('property: random valid layers and calls match the float64 reference', () => {
  let n = 0;
  fc.assert(fc.property(layerArb, callArb, (d, c) => { n++; checkCall(d, c); }), fcParams());
  runsDone.valid = n;
});

test('property: long key ranges (streaming softmax over several key blocks, Tk 513..1100) match the reference', () => {
  let n = 0;
  const arb = fc.record({
    h: fc.integer({ min: 1, max: 4 }), per: fc.integer({ min: 1, max: 3 }),
    Tq: fc.integer({ min: 1, max: 3 }), Tk: fc.integer({ min: 513, max: 1100 }),  // > one key block of 512
    causal: fc.constantFrom(false, false, false, true),  // mostly off: causal cross-attention of Tq ≤ 3 reads one block
    kpm: fc.constantFrom('none', 'bool', 'additive'), attn: fc.constantFrom('none', 'bool', 'additive', 'additivePerHead'),
    maskDensity: fc.constantFrom(0.1, 1, 1.99), batched: fc.boolean(), B: fc.integer({ min: 1, max: 2 }),
    amp: fc.constantFrom(1, 4), seed: fc.integer(), mode: fc.constant('noWeights'),  // weights off: the streaming path
  });
  fc.assert(fc.property(arb, (a) => {
    n++;
    const d = { form: 'packed', dModel: a.h * a.per, h: a.h, g: a.h, dk: Array(a.h).fill(a.per), dv: Array(a.h).fill(a.per), bias: true };
    checkCall(d, { ...a, cross: { kDim: 3, vDim: 2 }, inputForm: 0, weightForm: 0 });
  }), fcParams());
  runsDone.longKeys = n;
});

test('property: a KV cache fed random chunks reproduces causal self-attention', () => {
  let n = 0;
  const arb = fc.record({
    d: layerArb, maxLen: fc.integer({ min: 1, max: 24 }), fill: fc.integer({ min: 1, max: 24 }),
    chunks: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 24 }),
    B: fc.integer({ min: 1, max: 2 }), batched: fc.boolean(), weights: fc.boolean(), seed: fc.integer(),
    reset: fc.boolean(),
  });
  fc.assert(fc.property(arb, (a) => {
    n++;
    const { opts, L } = buildLayer(a.d, null, a.seed, 0);
    const rand = prng(a.seed + 1);
    const T = Math.min(a.fill, a.maxLen);
    const B = a.B, batched = a.batched || B > 1, lead = batched ? [B] : [];
    const x = values(rand, B * T * L.dModel);
    const M = new Float64Array(B * L.h * T * T);
    for (let b = 0; b < B; b++) for (let i = 0; i < L.h; i++) for (let t = 0; t < T; t++) for (let j = t + 1; j < T; j++) M[((b * L.h + i) * T + t) * T + j] = -Infinity;
    const ref = reference(L, { B, Tq: T, Tk: T, q: x, k: x, v: x }, M);
    const layer = mha.createLayer(opts);
    try {
      const cache = layer.createKVCache({ maxLen: a.maxLen, batch: B });
      const feed = () => {
        let at = 0, ci = 0;
        while (at < T) {
          const len = Math.min(T - at, a.chunks[ci++ % a.chunks.length]);
          const chunk = new Float32Array(B * len * L.dModel);
          for (let b = 0; b < B; b++) chunk.set(x.subarray((b * T + at) * L.dModel, (b * T + at + len) * L.dModel), b * len * L.dModel);
          const r = cache.step({ data: chunk, shape: [...lead, len, L.dModel] }, { needWeights: a.weights });
          assert.deepEqual(r.output.shape, [...lead, len, L.dModel]);
          const want = new Float64Array(B * len * L.dModel);
          for (let b = 0; b < B; b++) want.set(ref.out.subarray((b * T + at) * L.dModel, (b * T + at + len) * L.dModel), b * len * L.dModel);
          assertClose(r.output.data, want, TOL, `step at ${at} output`);
          if (a.weights) {
            assert.deepEqual(r.weights.shape, [...lead, L.h, len, at + len]);
            for (let b = 0; b < B; b++) {
              for (let i = 0; i < L.h; i++) {
                for (let t = 0; t < len; t++) {
                  for (let j = 0; j < at + len; j++) {
                    const got = r.weights.data[((b * L.h + i) * len + t) * (at + len) + j];
                    const w = ref.A[((b * L.h + i) * T + at + t) * T + j];
                    assert.ok(Math.abs(got - w) <= 2e-4, `step weights [${b}, ${i}, ${t}, ${j}] ${got} vs ${w}`);
                  }
                }
              }
            }
          }
          at += len;
          assert.equal(cache.length, at);
        }
      };
      feed();
      if (T === a.maxLen) {
        throwsMHA(() => cache.step({ data: new Float32Array(B * L.dModel), shape: [...lead, 1, L.dModel] }), 'INVALID_ARGUMENT', /maxLen/);
        assert.equal(cache.length, T);
      }
      if (a.reset) {
        cache.reset();
        assert.equal(cache.length, 0);
        feed();  // the same sequence again gives the same rows
      }
    } finally {
      layer.dispose();
    }
  }), fcParams());
  runsDone.kvCache = n;
});

// ---------------------------------------------------------------------------------------------
// Invalid calls.

// The probe layer (dModel 8, 2 heads) on probeX [3, 8]: the target of many bad calls below, and
// probe.check() says the module still works after each one.
const probe = stillWorksProbe(mha);
const { layer: probeLayer, x: probeX } = probe;

const bad = fc.constantFrom(0, -1, 1.5, NaN, Infinity, -Infinity, '8', true, [], {}, 2 ** 31, 1e300, -0.5);
const nonFinite = fc.constantFrom(NaN, Infinity, -Infinity);
const W = (r, c, rand) => ({ data: values(rand, r * c), shape: [r, c] });

/**
 * Each arbitrary yields {name, code, run(rand)}; run makes the bad call (creating what it needs).
 * `code` is the MHAError code the contract documents for it.
 */
const invalidArb = fc.oneof(
  // --- configuration ---
  fc.record({ key: fc.constantFrom('dModel', 'numHeads', 'kvHeads', 'dK', 'dV', 'kDim', 'vDim'), v: bad })
    .map(({ key, v }) => ({ name: `createLayer ${key} = ${String(v)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, seed: 1, [key]: v }) })),
  fc.record({ key: fc.constantFrom('seqLen', 'dModel', 'numHeads', 'kvHeads', 'keyLen', 'batch', 'dK', 'dV'), v: bad })
    .map(({ key, v }) => ({ name: `passport ${key} = ${String(v)}`, code: 'INVALID_CONFIG', run: () => mha.passport({ seqLen: 4, dModel: 8, numHeads: 2, [key]: v }) })),
  fc.record({ dModel: fc.integer({ min: 1, max: 64 }), h: fc.integer({ min: 2, max: 64 }) }).filter((o) => o.dModel % o.h !== 0)
    .map(({ dModel, h }) => ({ name: `numHeads ${h} ∤ dModel ${dModel}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel, numHeads: h }) })),
  fc.record({ h: fc.integer({ min: 2, max: 16 }), g: fc.integer({ min: 2, max: 16 }) }).filter((o) => o.h % o.g !== 0)
    .map(({ h, g }) => ({ name: `kvHeads ${g} ∤ numHeads ${h}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: h * 2, numHeads: h, kvHeads: g }) })),
  fc.constantFrom(NaN, -1, Infinity, '1', -Infinity).map((s) => ({ name: `scale ${String(s)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, scale: s }) })),
  fc.constantFrom(1.5, '3', NaN, {}).map((s) => ({ name: `seed ${String(s)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, seed: s }) })),
  fc.constantFrom('yes', 1, null).map((b) => ({ name: `bias ${String(b)}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: 8, numHeads: 2, bias: b }) })),
  fc.constantFrom(null, 5, 'x', undefined).map((o) => ({ name: `createLayer(${String(o)})`, code: 'INVALID_CONFIG', run: () => mha.createLayer(o) })),
  // huge sizes: too large for one matrix (INVALID_CONFIG) or for the heap (OUT_OF_MEMORY)
  fc.integer({ min: 46341, max: 2 ** 31 - 1 }).map((d) => ({ name: `dModel ${d}`, code: 'INVALID_CONFIG', run: () => mha.createLayer({ dModel: d, numHeads: 1 }) })),
  fc.integer({ min: 8300, max: 46340 }).map((d) => ({ name: `dModel ${d} (weights > heap)`, code: 'OUT_OF_MEMORY', run: () => mha.createLayer({ dModel: d, numHeads: 1 }) })),
  fc.integer({ min: 2 ** 24, max: 2 ** 28 - 1 }).map((dk) => ({ name: `dK ${dk}`, code: 'OUT_OF_MEMORY', run: () => mha.createLayer({ dModel: 8, numHeads: 1, dK: dk }) })),
  // numHeads beyond kMaxHeads (bug found by cpp/fuzz: resolve() allocated per-head tables first and
  // numHeads = 2^31 - 1 with dK = 1 aborted the instance, in passport() as in createLayer())
  fc.record({ h: fc.integer({ min: 65537, max: 2 ** 31 - 1 }), passport: fc.boolean() })
    .map(({ h, passport }) => ({ name: `numHeads ${h}${passport ? ' (passport)' : ''}`, code: 'INVALID_CONFIG', pattern: /numHeads/,
      run: () => (passport ? mha.passport({ seqLen: 1, dModel: 1, numHeads: h, dK: 1 }) : mha.createLayer({ dModel: 1, numHeads: h, dK: 1, kvHeads: 1 })) })),
  // --- weights ---
  fc.record({ which: fc.constantFrom('wQ', 'wK', 'wV', 'wO'), dr: fc.integer({ min: -3, max: 3 }), dc: fc.integer({ min: -3, max: 3 }), seed: fc.integer() })
    .filter((o) => o.dr !== 0 || o.dc !== 0)
    .map(({ which, dr, dc, seed }) => ({ name: `weights.${which} shape off by [${dr}, ${dc}]`, code: 'SHAPE_MISMATCH', run: () => {
      const rand = prng(seed);
      const w = { wQ: W(8, 8, rand), wK: W(8, 8, rand), wV: W(8, 8, rand), wO: W(8, 8, rand) };
      w[which] = W(Math.max(0, 8 + dr), Math.max(0, 8 + dc), rand);
      return mha.createLayer({ numHeads: 2, dModel: 8, kDim: 8, vDim: 8, bias: false, weights: w });  // (kDim, vDim are inferred from wK, wV when omitted)
    } })),
  fc.record({ which: fc.constantFrom('wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO'), at: fc.nat(), v: nonFinite, seed: fc.integer(), nested: fc.boolean() })
    .map(({ which, at, v, seed, nested }) => ({ name: `weights.${which} has ${v}`, code: 'NON_FINITE', pattern: new RegExp(`weights\\.${which}\\[`), run: () => {
      const rand = prng(seed);
      const w = { wQ: W(8, 8, rand), wK: W(8, 8, rand), wV: W(8, 8, rand), wO: W(8, 8, rand),
        bQ: { data: values(rand, 8), shape: [8] }, bK: { data: values(rand, 8), shape: [8] }, bV: { data: values(rand, 8), shape: [8] }, bO: { data: values(rand, 8), shape: [8] } };
      w[which].data[at % w[which].data.length] = v;
      if (nested) w[which] = nest(w[which].data, w[which].shape);
      return mha.createLayer({ numHeads: 2, weights: w });
    } })),
  fc.record({ which: fc.constantFrom('wQ', 'wK', 'wV', 'wO', 'bQ'), what: fc.constantFrom('missing', 'string', 'strings', 'number', 'null') })
    .map(({ which, what }) => ({ name: `weights.${which} ${what}`, code: 'INVALID_ARGUMENT', run: () => {
      const rand = prng(1);
      const w = { wQ: W(8, 8, rand), wK: W(8, 8, rand), wV: W(8, 8, rand), wO: W(8, 8, rand), bQ: { data: new Float32Array(8), shape: [8] }, bK: [0, 0, 0, 0, 0, 0, 0, 0], bV: new Tensor(new Float32Array(8), [8]), bO: { data: new Float32Array(8), shape: [8] } };
      if (what === 'missing') delete w[which];
      else if (what === 'string') w[which] = 'weights';
      else if (what === 'strings') w[which] = which[0] === 'b' ? new Array(8).fill('0') : Array.from({ length: 8 }, () => new Array(8).fill('1'));
      else if (what === 'number') w[which] = 3;
      else w[which] = null;
      return mha.createLayer({ numHeads: 2, dModel: 8, bias: true, weights: w });
    } })),
  fc.constantFrom(5, 'w', true).map((w) => ({ name: `weights = ${String(w)}`, code: 'INVALID_ARGUMENT', run: () => mha.createLayer({ dModel: 8, numHeads: 2, weights: w }) })),
  fc.constantFrom('missing wK', 'dk 0', 'wK width', 'head null', 'wO rows').map((what) => ({ name: `per-head ${what}`, code: what === 'missing wK' || what === 'head null' ? 'INVALID_ARGUMENT' : 'SHAPE_MISMATCH', run: () => {
    const rand = prng(3);
    const heads = [{ wQ: W(6, 3, rand), wK: W(6, 3, rand), wV: W(6, 3, rand) }, { wQ: W(6, 2, rand), wK: W(6, 2, rand), wV: W(6, 2, rand) }];
    let wO = W(5, 6, rand);
    if (what === 'missing wK') delete heads[1].wK;
    if (what === 'dk 0') heads[0] = { wQ: { data: new Float32Array(0), shape: [6, 0] }, wK: { data: new Float32Array(0), shape: [6, 0] }, wV: W(6, 3, rand) };
    if (what === 'wK width') heads[1].wK = W(6, 3, rand);
    if (what === 'head null') heads[1] = null;
    if (what === 'wO rows') wO = W(6, 6, rand);
    return mha.createLayer({ weights: { heads, wO } });
  } })),
  // --- forward inputs ---
  fc.record({ shape: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 5 }), mode: fc.constantFrom('forward', 'trace') })
    .filter(({ shape }) => !((shape.length === 2 || shape.length === 3) && shape[shape.length - 1] === 8 && shape.every((x) => x >= 1)))
    .map(({ shape, mode }) => ({ name: `${mode} query shape [${shape}]`, code: 'SHAPE_MISMATCH', run: () => {
      const n = shape.reduce((a, b) => a * b, 1);
      return probeLayer[mode]({ data: new Float32Array(n), shape });
    } })),
  fc.record({ at: fc.nat(), v: nonFinite, B: fc.integer({ min: 1, max: 3 }), T: fc.integer({ min: 1, max: 6 }), nested: fc.boolean(), mode: fc.constantFrom('forward', 'trace') })
    .map(({ at, v, B, T, nested, mode }) => ({ name: `${mode} query has ${v}`, code: 'NON_FINITE', pattern: /query\[/, run: () => {
      const data = values(prng(at), B * T * 8);
      data[at % data.length] = v;
      return probeLayer[mode](nested ? nest(data, [B, T, 8]) : { data, shape: [B, T, 8] });
    } })),
  fc.constantFrom(null, undefined, 5, 'hello', true, {}, [[]], [[1, 2], [3]], [['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']], [[null, 0, 0, 0, 0, 0, 0, 0]], { data: 'abc', shape: [1, 3] }, { data: [1, 2], shape: [1, 2, -1] }, { data: new Float32Array(8), shape: [1.5, 8] }, { data: new Float32Array(8), shape: '1,8' }, { data: new Float32Array(8), shape: [2 ** 40, 8] }, { data: [1n], shape: [1, 1] })
    .map((q) => ({ name: `query ${typeof q === 'object' && q ? JSON.stringify(q, (k, v) => typeof v === 'bigint' ? 'bigint' : v).slice(0, 40) : String(q)}`,
      code: Array.isArray(q) && (q.length === 0 || Array.isArray(q[0]) && (q[0].length === 0 || q.length === 2)) ? 'SHAPE_MISMATCH'
        : q && q.shape && Array.isArray(q.shape) && q.shape[0] === 2 ** 40 ? 'SHAPE_MISMATCH' : 'INVALID_ARGUMENT',
      run: () => probeLayer.forward(q) })),
  // cross-attention
  fc.record({ what: fc.constantFrom('value without key', 'key width', 'value length', 'key batch', 'key NaN', 'value Inf', 'key rank', 'key empty'), seed: fc.integer() })
    .map(({ what, seed }) => ({ name: `cross ${what}`, code: { 'value without key': 'INVALID_ARGUMENT', 'key NaN': 'NON_FINITE', 'value Inf': 'NON_FINITE' }[what] || 'SHAPE_MISMATCH', run: () => {
      const rand = prng(seed);
      const l = mha.createLayer({ dModel: 8, numHeads: 2, kDim: 3, vDim: 5, seed: 1 });
      try {
        const q = { data: values(rand, 2 * 4 * 8), shape: [2, 4, 8] };
        const k = { data: values(rand, 2 * 6 * 3), shape: [2, 6, 3] };
        const v = { data: values(rand, 2 * 6 * 5), shape: [2, 6, 5] };
        if (what === 'value without key') return l.forward(q, { value: v });
        if (what === 'key width') return l.forward(q, { key: { data: values(rand, 2 * 6 * 4), shape: [2, 6, 4] }, value: v });
        if (what === 'value length') return l.forward(q, { key: k, value: { data: values(rand, 2 * 5 * 5), shape: [2, 5, 5] } });
        if (what === 'key batch') return l.forward(q, { key: { data: values(rand, 6 * 3), shape: [1, 6, 3] }, value: v });
        if (what === 'key NaN') { k.data[Math.floor(rand() * k.data.length)] = NaN; return l.forward(q, { key: k, value: v }); }
        if (what === 'value Inf') { v.data[Math.floor(rand() * v.data.length)] = -Infinity; return l.forward(q, { key: k, value: v }); }
        if (what === 'key rank') return l.forward(q, { key: { data: k.data, shape: [12, 3] }, value: v });
        return l.forward(q, { key: { data: new Float32Array(0), shape: [2, 0, 3] }, value: { data: new Float32Array(0), shape: [2, 0, 5] } });
      } finally { l.dispose(); }
    } })),
  // masks
  fc.record({ which: fc.constantFrom('attnMask', 'keyPaddingMask'), shape: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 4 }), bool: fc.boolean() })
    .filter(({ which, shape }) => {
      const ok = which === 'attnMask' ? [[3, 3], [2, 3, 3], [1, 2, 3, 3]] : [[3], [1, 3]];
      return !ok.some((s) => s.length === shape.length && s.every((x, i) => x === shape[i]));
    })
    .map(({ which, shape, bool }) => ({ name: `${which} shape [${shape}]`, code: 'SHAPE_MISMATCH', run: () => {
      const n = shape.reduce((a, b) => a * b, 1);
      return probeLayer.forward(probeX, { [which]: { data: bool ? new Uint8Array(n) : new Float32Array(n), shape } });
    } })),
  fc.record({ which: fc.constantFrom('attnMask', 'keyPaddingMask'), v: fc.constantFrom(NaN, Infinity, 1e39), at: fc.nat(), nested: fc.boolean() })
    .map(({ which, v, at, nested }) => ({ name: `${which} has ${v}`, code: 'NON_FINITE', pattern: new RegExp(`^(forward: )?${which}\\[`), run: () => {
      const shape = which === 'attnMask' ? [3, 3] : [3];
      const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
      data[at % data.length] = v;
      return probeLayer.forward(probeX, { [which]: nested ? nest(Array.from(data), shape) : { data, shape } });
    } })),
  fc.constantFrom('yes', 5, {}, [[true, 1, false], [0, 0, 0], [0, 0, 0]], [[0, 'a', 0], [0, 0, 0], [0, 0, 0]], { data: 'abcdefghi', shape: [3, 3] }, { data: [0, 0, 0, 0, 0, 0, 0, 0, {}], shape: [3, 3] }, { data: new Uint8Array(9), shape: [3, -3] })
    .chain((m) => fc.constantFrom('attnMask', 'keyPaddingMask').map((which) => ({ m, which })))
    .map(({ m, which }) => ({ name: `${which} = ${JSON.stringify(m)}`, code: 'INVALID_ARGUMENT',
      run: () => probeLayer.forward(probeX, { [which]: m }) })),
  fc.record({ key: fc.constantFrom('causal', 'needWeights', 'averageWeights'), v: fc.constantFrom('yes', 1, 0, null, {}, 'false') })
    .map(({ key, v }) => ({ name: `${key} = ${JSON.stringify(v)}`, code: 'INVALID_ARGUMENT', run: () => probeLayer.forward(probeX, { [key]: v }) })),
  fc.constantFrom(null, 'x', 5).map((o) => ({ name: `forward options ${String(o)}`, code: 'INVALID_ARGUMENT', run: () => probeLayer.forward(probeX, o) })),
  // --- memory ---
  fc.record({ T: fc.integer({ min: 23200, max: 60000 }), mode: fc.constantFrom('forward', 'trace', 'average') })
    .map(({ T, mode }) => ({ name: `${mode} T = ${T} (weights > heap)`, code: 'OUT_OF_MEMORY', bytes: true, run: () => {
      const l = mha.createLayer({ dModel: 1, numHeads: 1, seed: 1 });
      try {
        const q = { data: new Float32Array(T), shape: [T, 1] };
        return mode === 'trace' ? l.trace(q) : l.forward(q, { averageWeights: mode === 'average' });
      } finally { l.dispose(); }
    } })),
  fc.integer({ min: 2 ** 25, max: 2 ** 31 - 1 }).map((m) => ({ name: `createKVCache maxLen ${m}`, code: 'OUT_OF_MEMORY', bytes: true, run: () => probeLayer.createKVCache({ maxLen: m }) })),
  // float32 overflow of finite values (bug found by this file: it used to give a silent NaN)
  fc.record({ wv: fc.constantFrom(1e20, 3e38, -1e30), xv: fc.constantFrom(1e20, -3e38, 1e25), T: fc.integer({ min: 1, max: 4 }), cache: fc.boolean() })
    .map(({ wv, xv, T, cache }) => ({ name: `overflow w ${wv} x ${xv}${cache ? ' (cache)' : ''}`, code: 'NON_FINITE', pattern: /float32 overflow/, run: () => {
      const l = mha.createLayer({ dModel: 4, numHeads: 2, bias: false, weights: { wQ: { data: new Float32Array(16).fill(wv), shape: [4, 4] }, wK: { data: new Float32Array(16).fill(wv), shape: [4, 4] }, wV: { data: new Float32Array(16).fill(wv), shape: [4, 4] }, wO: { data: new Float32Array(16).fill(wv), shape: [4, 4] } } });
      try {
        const x = { data: new Float32Array(T * 4).fill(xv), shape: [T, 4] };
        if (cache) {
          const c = l.createKVCache({ maxLen: 8 });
          try { return c.step(x); } finally { assert.equal(c.length, 0, 'a refused step keeps the cache length'); }
        }
        return l.forward(x);
      } finally { l.dispose(); }
    } })),
  // --- lifecycle ---
  fc.constantFrom('forward', 'trace', 'createKVCache', 'step', 'reset', 'step after layer dispose').map((what) => ({ name: `${what} after dispose`, code: 'DISPOSED', run: () => {
    const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 4 });
    const c = l.createKVCache({ maxLen: 4 });
    if (what === 'step after layer dispose') { l.dispose(); return c.step(probeX); }
    if (what === 'step' || what === 'reset') { c.dispose(); l.dispose(); return what === 'step' ? c.step(probeX) : c.reset(); }
    l.dispose();
    return what === 'createKVCache' ? l.createKVCache({ maxLen: 2 }) : l[what](probeX);
  } })),
  fc.record({ maxLen: fc.integer({ min: 1, max: 8 }), first: fc.integer({ min: 0, max: 8 }), more: fc.integer({ min: 1, max: 8 }) })
    .filter(({ maxLen, first, more }) => first <= maxLen && first + more > maxLen)
    .map(({ maxLen, first, more }) => ({ name: `cache ${first}+${more} past maxLen ${maxLen}`, code: 'INVALID_ARGUMENT', pattern: /maxLen/, run: () => {
      const l = mha.createLayer({ dModel: 8, numHeads: 2, seed: 4 });
      try {
        const c = l.createKVCache({ maxLen });
        if (first) c.step({ data: values(prng(first), first * 8), shape: [first, 8] });
        try { return c.step({ data: values(prng(more), more * 8), shape: [more, 8] }); } finally { assert.equal(c.length, first); }
      } finally { l.dispose(); }
    } })),
  fc.record({ key: fc.constantFrom('maxLen', 'batch'), v: fc.constantFrom(0, -1, 1.5, NaN, 'x', null, Infinity, 2 ** 31) })
    .filter(({ key, v }) => !(key === 'batch' && v === null))
    .map(({ key, v }) => ({ name: `createKVCache ${key} = ${String(v)}`, code: 'INVALID_ARGUMENT', run: () => probeLayer.createKVCache({ maxLen: 4, [key]: v }) })),
  fc.constantFrom('cross layer', 'step shape', 'step NaN', 'step batch', 'step empty').map((what) => ({ name: `cache ${what}`, code: { 'cross layer': 'INVALID_CONFIG', 'step NaN': 'NON_FINITE' }[what] || 'SHAPE_MISMATCH', run: () => {
    const l = mha.createLayer(what === 'cross layer' ? { dModel: 8, numHeads: 2, kDim: 3, seed: 1 } : { dModel: 8, numHeads: 2, seed: 1 });
    try {
      const c = l.createKVCache({ maxLen: 4 });
      if (what === 'step shape') return c.step({ data: new Float32Array(7), shape: [1, 7] });
      if (what === 'step NaN') { try { return c.step([[0, 0, 0, NaN, 0, 0, 0, 0]]); } finally { assert.equal(c.length, 0); } }
      if (what === 'step batch') return c.step({ data: new Float32Array(16), shape: [2, 1, 8] });
      return c.step({ data: new Float32Array(0), shape: [0, 8] });
    } finally { l.dispose(); }
  } })),
  fc.constantFrom(null, 'sd', {}, { 'out_proj.weight': [[1, 2]] }, { 'out_proj.weight': [[1, 0], [0, 1]] }, { 'out_proj.weight': [[1, 0], [0, 1]], in_proj_weight: [[1, 2]] })
    .map((sd) => ({ name: `fromTorch ${JSON.stringify(sd)}`, code: sd && sd['out_proj.weight'] && sd['out_proj.weight'].length === 1 ? 'SHAPE_MISMATCH' : sd && sd.in_proj_weight ? 'SHAPE_MISMATCH' : 'INVALID_ARGUMENT',
      run: () => mha.fromTorch(sd, { numHeads: 1 }) })),
);

test('property: every invalid call throws an MHAError with the documented code; the module keeps working', () => {
  let n = 0;
  const seen = new Map();
  fc.assert(fc.property(invalidArb, (c) => {
    n++;
    seen.set(c.code, (seen.get(c.code) || 0) + 1);
    let result, err = null;
    try { result = c.run(); } catch (e) { err = e; }
    if (err === null) assert.fail(`${c.name}: expected MHAError ${c.code}, the call returned ${result && result.output ? `output ${Array.from(result.output.data.slice(0, 4))}` : typeof result}`);
    if (!(err instanceof MHAError)) assert.fail(`${c.name}: expected MHAError ${c.code}, got ${err && err.constructor && err.constructor.name}: ${err && err.message}`);
    assert.equal(err.code, c.code, `${c.name}: "${err.message}"`);
    assert.ok(err.message.length > 10, `${c.name}: message "${err.message}"`);
    if (c.pattern) assert.match(err.message, c.pattern, c.name);
    if (c.bytes) assert.ok(Number.isFinite(err.bytes) && err.bytes > 2 ** 31 - 2 ** 25, `${c.name}: bytes = ${err.bytes}`);
    probe.check();
  }), fcParams());
  runsDone.invalid = n;
  // Every code was exercised (DISPOSED, OUT_OF_MEMORY included).
  for (const code of ['INVALID_CONFIG', 'SHAPE_MISMATCH', 'NON_FINITE', 'OUT_OF_MEMORY', 'DISPOSED', 'INVALID_ARGUMENT']) {
    assert.ok(RUNS < 200 || seen.get(code) > 0, `no run produced ${code}`);
  }
});

after(() => console.log(`# property runs: ${JSON.stringify(runsDone)}`));
