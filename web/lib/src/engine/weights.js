/**
 * Layer options and weights: validation, the packed and per-head forms, seeded Xavier init.
 * Convention: y = x·W + b with every W stored row-major as [in, out].
 * @module weights
 */
import { MHAError } from './errors.js';
import { toFloat32, expectShape, formatShape as fmt } from './tensor.js';

/**
 * The `scale` option: 0 when absent (the core then uses 1/√d_k per head), else a finite number ≥ 0.
 * @param {object} o options
 * @returns {number}
 * @throws {MHAError} INVALID_CONFIG naming the value given
 */
export function scaleOption(o) {
  const scale = o.scale === undefined || o.scale === null ? 0 : o.scale;
  if (typeof scale !== 'number' || !(scale >= 0) || !Number.isFinite(scale)) {
    throw new MHAError('INVALID_CONFIG', `scale must be a finite positive number, got ${String(o.scale)}`);
  }
  return scale;
}

/**
 * The `bias` option: undefined when absent, else a boolean.
 * @param {object} o options
 * @returns {boolean|undefined}
 * @throws {MHAError} INVALID_CONFIG naming the value given
 */
export function biasOption(o) {
  if (o.bias !== undefined && typeof o.bias !== 'boolean') throw new MHAError('INVALID_CONFIG', `bias must be a boolean, got ${String(o.bias)}`);
  return o.bias;
}

/**
 * Checks an optional integer option.
 * @param {object} o options
 * @param {string} key option name
 * @param {{required?: boolean, min?: number}} [spec]
 * @returns {number} the value, or 0 when absent and not required
 * @throws {MHAError} INVALID_CONFIG naming the option and the value given
 */
export function intOption(o, key, { required = false, min = 1 } = {}) {
  const v = o[key];
  if (v === undefined || v === null) {
    if (required) throw new MHAError('INVALID_CONFIG', `${key} is required (a positive integer)`);
    return 0;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 2 ** 31 - 1) {
    throw new MHAError('INVALID_CONFIG', `${key} must be ${min === 0 ? 'a non-negative' : 'a positive'} integer, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`);
  }
  return v;
}

/** mulberry32: a small deterministic PRNG returning floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Xavier-uniform (Glorot & Bengio 2010) init of W [rows, cols]: U(-a, a), a = √(6/(rows+cols)).
 * @param {() => number} rand PRNG in [0, 1)
 */
function xavier(rand, rows, cols) {
  const a = Math.sqrt(6 / (rows + cols));
  const w = new Float32Array(rows * cols);
  for (let i = 0; i < w.length; i++) w[i] = (2 * rand() - 1) * a;
  return w;
}

const has = (o, k) => o && o[k] !== undefined && o[k] !== null;

/**
 * Resolves createLayer options into a flat config and packed Float32Array weights.
 * The packed form W_Q [dModel, h·dK], W_K [kDim, g·dK], W_V [vDim, g·dV], W_O [h·dV, dModel]
 * is checked shape by shape; the per-head form `{heads: [{wQ, wK, wV, bQ?, bK?, bV?}], wO, bO?}`
 * is packed column-wise (head widths may differ). Without weights, a seeded Xavier-uniform init
 * (biases 0): the same seed and dModel give the same packed matrices for every numHeads.
 * @param {object} opts createLayer options
 * @param {(cfg: object) => {dK: number, dV: number}} checkConfig validates a config in the core
 * @returns {{config: object, packed: object, headDims: Int32Array|null}} config: the sizes, bias,
 *   scale (the option: 0 = the core's default, 1/√d_k per head) and headDims, what createLayer
 *   passes to the core (layer.config is then read back from the core)
 */
export function resolveLayer(opts, checkConfig) {
  if (opts === null || typeof opts !== 'object') {
    throw new MHAError('INVALID_CONFIG', `createLayer: options must be an object, got ${opts === null ? 'null' : typeof opts}`);
  }
  const w = opts.weights;
  if (w !== undefined && (w === null || typeof w !== 'object')) {
    throw new MHAError('INVALID_ARGUMENT', `weights must be an object of matrices, got ${w === null ? 'null' : typeof w}`);
  }
  if (w && Array.isArray(w.heads)) return resolvePerHead(opts, w);

  // Infer widths from packed weights when the options leave them out.
  const inferred = {};
  const shapeOf = (x) => (x && (Array.isArray(x.shape) ? x.shape : Array.isArray(x) ? [x.length, Array.isArray(x[0]) ? x[0].length : 0] : null));
  if (w) {
    const sq = shapeOf(w.wQ), sk = shapeOf(w.wK), sv = shapeOf(w.wV);
    if (sq && opts.dModel === undefined) inferred.dModel = sq[0];
    if (sk && opts.kDim === undefined) inferred.kDim = sk[0];
    if (sv && opts.vDim === undefined) inferred.vDim = sv[0];
  }
  const o = { ...inferred, ...opts };
  const dModel = intOption(o, 'dModel', { required: true });
  const numHeads = intOption(o, 'numHeads', { required: true });
  const kvHeads = intOption(o, 'kvHeads') || numHeads;
  const kDim = intOption(o, 'kDim') || dModel;
  const vDim = intOption(o, 'vDim') || dModel;
  let dK = intOption(o, 'dK');
  let dV = intOption(o, 'dV');
  const scale = scaleOption(o);
  const biasGiven = w && ['bQ', 'bK', 'bV', 'bO'].some((k) => has(w, k));
  biasOption(o);
  const bias = o.bias !== undefined ? o.bias : (w ? !!biasGiven : true);
  ({ dK, dV } = checkConfig({ dModel, numHeads, kvHeads, dK, dV, kDim, vDim, bias }));
  const h = numHeads, g = kvHeads;
  const shapes = {
    wQ: [dModel, h * dK], wK: [kDim, g * dK], wV: [vDim, g * dV], wO: [h * dV, dModel],
    bQ: [h * dK], bK: [g * dK], bV: [g * dV], bO: [dModel],
  };
  const packed = {};
  if (w) {
    for (const k of ['wQ', 'wK', 'wV', 'wO']) {
      if (!has(w, k)) throw new MHAError('INVALID_ARGUMENT', `weights.${k} is missing: expected shape ${fmt(shapes[k])}`);
      const t = toFloat32(w[k], `weights.${k}`);
      expectShape(t, shapes[k], `weights.${k}`);
      packed[k] = t.data;
    }
    for (const k of ['bQ', 'bK', 'bV', 'bO']) {
      if (!bias) {
        if (has(w, k)) throw new MHAError('INVALID_ARGUMENT', `weights.${k} given but bias is false`);
        continue;
      }
      if (!has(w, k)) throw new MHAError('INVALID_ARGUMENT', `weights.${k} is missing: bias is on, expected shape ${fmt(shapes[k])}`);
      const t = toFloat32(w[k], `weights.${k}`);
      expectShape(t, shapes[k], `weights.${k}`);
      packed[k] = t.data;
    }
  } else {
    const seed = o.seed === undefined ? 0 : o.seed;
    if (!Number.isInteger(seed)) throw new MHAError('INVALID_CONFIG', `seed must be an integer, got ${String(o.seed)}`);
    const rand = mulberry32(seed);
    for (const k of ['wQ', 'wK', 'wV', 'wO']) packed[k] = xavier(rand, shapes[k][0], shapes[k][1]);
    if (bias) for (const k of ['bQ', 'bK', 'bV', 'bO']) packed[k] = new Float32Array(shapes[k][0]);
  }
  return {
    config: { dModel, numHeads, kvHeads, dK, dV, kDim, vDim, bias, scale, headDims: null },
    packed,
    headDims: null,
  };
}

/** Packs column slices [rows, w_i] side by side into [rows, Σw_i] (kernels.hpp's pack_b_slices in JS). */
function packColumns(slices, rows) {
  const total = slices.reduce((a, b) => a + b.cols, 0);
  const out = new Float32Array(rows * total);
  let off = 0;
  for (const b of slices) {
    for (let r = 0; r < rows; r++) out.set(b.data.subarray(r * b.cols, (r + 1) * b.cols), r * total + off);
    off += b.cols;
  }
  return out;
}

/**
 * Reads and checks head i of the per-head form `{wQ, wK, wV, bQ?, bK?, bV?}`: W_Q^(i) [dModel, d_k],
 * W_K^(i) [kDim, d_k], W_V^(i) [vDim, d_v], and with bias on b_Q [d_k], b_K [d_k], b_V [d_v].
 * @param {object} hd weights.heads[i]
 * @param {number} i the head's index (error messages name `weights.heads[i]`)
 * @param {{dModel: number, kDim: number, vDim: number, bias: boolean}} dims
 * @returns {{dk: number, dv: number, wQ: Float32Array, wK: Float32Array, wV: Float32Array,
 *   bQ?: Float32Array, bK?: Float32Array, bV?: Float32Array}} row-major data; biases only with bias on
 * @throws {MHAError} INVALID_ARGUMENT: not an object, a matrix missing, a bias missing with bias on or
 *   given with it off; SHAPE_MISMATCH: a shape other than those above, d_k or d_v < 1
 */
function readHead(hd, i, { dModel, kDim, vDim, bias }) {
  const n = `weights.heads[${i}]`;
  if (!hd || typeof hd !== 'object') throw new MHAError('INVALID_ARGUMENT', `${n} must be an object {wQ, wK, wV}`);
  for (const k of ['wQ', 'wK', 'wV']) if (!has(hd, k)) throw new MHAError('INVALID_ARGUMENT', `${n}.${k} is missing`);
  const q = toFloat32(hd.wQ, `${n}.wQ`);
  if (q.shape.length !== 2) throw new MHAError('SHAPE_MISMATCH', `${n}.wQ: expected shape [${dModel}, d_k], got ${fmt(q.shape)}`);
  const dk = q.shape[1];
  expectShape(q, [dModel, null], `${n}.wQ`);
  const k = toFloat32(hd.wK, `${n}.wK`);
  expectShape(k, [kDim, dk], `${n}.wK`);
  const v = toFloat32(hd.wV, `${n}.wV`);
  expectShape(v, [vDim, null], `${n}.wV`);
  const dv = v.shape[1];
  if (dk < 1 || dv < 1) throw new MHAError('SHAPE_MISMATCH', `${n}: d_k and d_v must be ≥ 1, got ${dk} and ${dv}`);
  const out = { dk, dv, wQ: q.data, wK: k.data, wV: v.data };
  for (const [key, len] of [['bQ', dk], ['bK', dk], ['bV', dv]]) {
    if (!bias) {
      if (has(hd, key)) throw new MHAError('INVALID_ARGUMENT', `${n}.${key} given but bias is false`);
      continue;
    }
    if (!has(hd, key)) throw new MHAError('INVALID_ARGUMENT', `${n}.${key} is missing: bias is on, expected shape [${len}]`);
    const b = toFloat32(hd[key], `${n}.${key}`);
    expectShape(b, [len], `${n}.${key}`);
    out[key] = b.data;
  }
  return out;
}

/**
 * resolveLayer for the per-head form `{heads: [{wQ, wK, wV, bQ?, bK?, bV?}], wO, bO?}`: numHeads is
 * the number of heads (kvHeads must equal it), dModel / kDim / vDim default to the rows of head 0's
 * matrices, bias to whether any bias is given; the heads (whose widths may differ) are packed
 * column-wise and W_O is [Σ d_v, dModel].
 * @param {object} opts createLayer options
 * @param {object} w opts.weights, with `heads` an array
 * @returns {{config: object, packed: object, headDims: Int32Array}} as resolveLayer; headDims holds
 *   the h values d_k then the h values d_v
 * @throws {MHAError} INVALID_CONFIG: no heads, numHeads or kvHeads disagreeing with the heads, a bad
 *   option; INVALID_ARGUMENT / SHAPE_MISMATCH: see readHead, W_O and b_O missing or misshapen
 */
function resolvePerHead(opts, w) {
  const heads = w.heads;
  if (heads.length === 0) throw new MHAError('INVALID_CONFIG', 'weights.heads must hold at least one head, got 0');
  const numHeads = opts.numHeads === undefined ? heads.length : intOption(opts, 'numHeads');
  if (numHeads !== heads.length) {
    throw new MHAError('INVALID_CONFIG', `numHeads = ${numHeads} but weights.heads has ${heads.length} heads`);
  }
  if (opts.kvHeads !== undefined && opts.kvHeads !== numHeads) {
    throw new MHAError('INVALID_CONFIG', `per-head weights need kvHeads = numHeads (${numHeads}), got ${String(opts.kvHeads)}`);
  }
  const h0 = heads[0] || {};
  const q0 = h0.wQ ? toFloat32(h0.wQ, 'weights.heads[0].wQ') : null;
  const k0 = h0.wK ? toFloat32(h0.wK, 'weights.heads[0].wK') : null;
  const v0 = h0.wV ? toFloat32(h0.wV, 'weights.heads[0].wV') : null;
  const o = {
    dModel: q0 && q0.shape.length === 2 ? q0.shape[0] : undefined,
    kDim: k0 && k0.shape.length === 2 ? k0.shape[0] : undefined,
    vDim: v0 && v0.shape.length === 2 ? v0.shape[0] : undefined,
    ...opts,
  };
  const dModel = intOption(o, 'dModel', { required: true });
  const kDim = intOption(o, 'kDim') || dModel;
  const vDim = intOption(o, 'vDim') || dModel;
  biasOption(o);
  const anyBias = heads.some((hd) => hd && ['bQ', 'bK', 'bV'].some((k) => has(hd, k))) || has(w, 'bO');
  const bias = o.bias !== undefined ? o.bias : anyBias;
  const scale = scaleOption(o);
  const qs = [], ks = [], vs = [], bq = [], bk = [], bv = [];
  const dks = [], dvs = [];
  heads.forEach((hd, i) => {
    const r = readHead(hd, i, { dModel, kDim, vDim, bias });
    dks.push(r.dk); dvs.push(r.dv);
    qs.push({ data: r.wQ, cols: r.dk }); ks.push({ data: r.wK, cols: r.dk }); vs.push({ data: r.wV, cols: r.dv });
    if (bias) { bq.push({ data: r.bQ, cols: r.dk }); bk.push({ data: r.bK, cols: r.dk }); bv.push({ data: r.bV, cols: r.dv }); }
  });
  const sumDv = dvs.reduce((a, b) => a + b, 0);
  if (!has(w, 'wO')) throw new MHAError('INVALID_ARGUMENT', `weights.wO is missing: expected shape [${sumDv}, ${dModel}]`);
  const wo = toFloat32(w.wO, 'weights.wO');
  expectShape(wo, [sumDv, dModel], 'weights.wO');
  const packed = {
    wQ: packColumns(qs, dModel), wK: packColumns(ks, kDim), wV: packColumns(vs, vDim), wO: wo.data,
  };
  if (bias) {
    if (!has(w, 'bO')) throw new MHAError('INVALID_ARGUMENT', `weights.bO is missing: bias is on, expected shape [${dModel}]`);
    const bo = toFloat32(w.bO, 'weights.bO');
    expectShape(bo, [dModel], 'weights.bO');
    packed.bQ = packColumns(bq, 1); packed.bK = packColumns(bk, 1); packed.bV = packColumns(bv, 1); packed.bO = bo.data;
  } else if (has(w, 'bO')) {
    throw new MHAError('INVALID_ARGUMENT', 'weights.bO given but bias is false');
  }
  const headDims = new Int32Array([...dks, ...dvs]);
  return {
    config: {
      dModel, numHeads, kvHeads: numHeads, dK: dks[0], dV: dvs[0], kDim, vDim, bias,
      scale, headDims: { dK: dks, dV: dvs },
    },
    packed,
    headDims,
  };
}
