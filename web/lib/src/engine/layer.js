/**
 * Layer and KVCache: the JS side of one attention layer living in wasm memory. Their lifecycle
 * (dispose, the FinalizationRegistry, the disposed check, the core's errors) is WasmObject's
 * (handle.js); a forward is checked here, planned (its memory layout, reused while the sizes
 * repeat), written into wasm memory and run as one core call.
 * @module layer
 */
import { MHAError } from './errors.js';
import { checkFits, heapViews, readFloats as copyOut } from './memory.js';
import { prepareMasks } from './masks.js';
import { Tensor, toFloat32, formatShape as fmt } from './tensor.js';
import { WasmObject, initHandle } from './handle.js';
import { argsLayout } from './args.js';
import { enumValue } from './core-tables.js';
import { checkOptions, boolOption, headMaskOption, checkOut, intoOrCopy } from './forward-options.js';

const F32 = 4;

/**
 * The tensors of a forward, checked against the layer's sizes: query [B?, Tq, dModel] and, for
 * cross-attention, key [B?, Tk, kDim] and value [B?, Tk, vDim] (value defaults to the key).
 * @returns {{q: object, k: object|null, v: object|null, batched: boolean, B: number, Tq: number, Tk: number}}
 * @throws {MHAError} SHAPE_MISMATCH, INVALID_ARGUMENT (value without key), NON_FINITE (toFloat32)
 */
function readInputs(query, opts, c) {
  const q = toFloat32(query, 'query');
  if (q.shape.length !== 2 && q.shape.length !== 3) {
    throw new MHAError('SHAPE_MISMATCH', `query: expected shape [B, Tq, ${c.dModel}] or [Tq, ${c.dModel}], got ${fmt(q.shape)}`);
  }
  const batched = q.shape.length === 3;
  const B = batched ? q.shape[0] : 1;
  const Tq = q.shape[q.shape.length - 2];
  if (q.shape[q.shape.length - 1] !== c.dModel || Tq < 1 || B < 1) {
    throw new MHAError('SHAPE_MISMATCH', `query: expected shape ${batched ? `[B, Tq, ${c.dModel}]` : `[Tq, ${c.dModel}]`} with B, Tq ≥ 1, got ${fmt(q.shape)}`);
  }
  let k = null, v = null, Tk = Tq;
  if (opts.key != null || opts.value != null) {
    if (opts.key == null) throw new MHAError('INVALID_ARGUMENT', 'value given without key: pass key (and value) for cross-attention');
    k = toFloat32(opts.key, 'key');
    v = opts.value == null ? k : toFloat32(opts.value, 'value');
    const lead = batched ? [B] : [];
    if (k.shape.length !== q.shape.length || (batched && k.shape[0] !== B) || k.shape[k.shape.length - 1] !== c.kDim || k.shape[k.shape.length - 2] < 1) {
      throw new MHAError('SHAPE_MISMATCH', `key: expected shape ${fmt([...lead.map(String), 'Tk', c.kDim])} (same batch as query, kDim = ${c.kDim}), got ${fmt(k.shape)}`);
    }
    Tk = k.shape[k.shape.length - 2];
    if (v.shape.length !== q.shape.length || (batched && v.shape[0] !== B) || v.shape[v.shape.length - 2] !== Tk || v.shape[v.shape.length - 1] !== c.vDim) {
      throw new MHAError('SHAPE_MISMATCH', `value: expected shape ${fmt([...lead, Tk, c.vDim])} (same batch and length as key, vDim = ${c.vDim}), got ${fmt(v.shape)}`);
    }
  }
  return { q, k, v, batched, B, Tq, Tk };
}

/**
 * The other options of a forward or trace (a trace always returns per-head weights and refuses out).
 * @returns {{causal: boolean, needWeights: boolean, average: boolean, masks: object,
 *   headMask: Float32Array|null, out: object|null}}
 * @throws {MHAError} INVALID_ARGUMENT, SHAPE_MISMATCH (masks, headMask, out)
 */
function readCallOptions(opts, mode, name, c, inp) {
  const { B, Tq, Tk, batched } = inp;
  const h = c.numHeads;
  const causal = boolOption(opts.causal, 'causal', false);
  const needWeights = mode === 'trace' ? true : boolOption(opts.needWeights, 'needWeights', true);
  const average = mode === 'trace' ? false : boolOption(opts.averageWeights, 'averageWeights', false);
  const masks = prepareMasks(opts, { B, Tq, Tk, h, batched });
  const headMask = headMaskOption(opts.headMask, h, name);
  let out = null;
  if (opts.out != null) {
    if (mode === 'trace') throw new MHAError('INVALID_ARGUMENT', 'trace: out is not supported (trace returns new tensors)');
    const lead = batched ? [B] : [];
    out = checkOut(opts.out, B * Tq * c.dModel, needWeights ? (average ? B : B * h) * Tq * Tk : 0,
      (key) => (key === 'output' ? [...lead, Tq, c.dModel] : average ? [...lead, Tq, Tk] : [...lead, h, Tq, Tk]), name);
  }
  return { causal, needWeights, average, masks, headMask, out };
}

/**
 * What a forward's memory plan depends on: sizes and flags (never the values). Two calls with equal
 * keys share one plan.
 */
function planKey(mode, inp, o) {
  const { masks } = o;
  return {
    mode, B: inp.B, Tq: inp.Tq, Tk: inp.Tk,
    kv: inp.k ? (inp.v !== inp.k ? 2 : 1) : 0,     // self, key = value, key and value
    kpm: masks.kpm ? 1 : masks.kpmAdd ? 2 : 0,      // key padding mask: none, boolean, additive
    attnKind: masks.attnKind, needWeights: o.needWeights, average: o.average, headMask: o.headMask !== null,
  };
}

function samePlan(plan, key, base) {
  if (plan === null || plan.base !== base) return false;
  for (const k in key) if (plan[k] !== key[k]) return false;
  return true;
}

/**
 * The regions of a forward in the layer's staging memory after its LayerForwardArgs, in bytes (the
 * inputs are written per call): the inputs, the masks, the results (the output written over the
 * query: the core reads each query row before it writes that row's output, ForwardArgs::output)
 * and, for a trace, the intermediates (trace_q … trace_concat).
 */
function forwardRegions(key, inp, o, h, g) {
  const { B, Tq, Tk, q, k, v } = inp;
  const trace = key.mode === 'trace' ? F32 : 0;   // the intermediates are absent outside a trace
  return [
    ['query', q.data.length * F32],
    ['key', k ? k.data.length * F32 : 0],
    ['value', k && v !== k ? v.data.length * F32 : 0],
    ['kpm', o.masks.kpm ? o.masks.kpm.length : o.masks.kpmAdd ? o.masks.kpmAdd.length * F32 : 0],
    ['mask', o.masks.attn ? o.masks.attn.length * F32 : 0],
    ['headMask', o.headMask ? h * F32 : 0],
    ['output', { alias: 'query' }],
    ['weights', key.needWeights ? (key.average ? B * Tq * Tk : B * h * Tq * Tk) * F32 : 0],
    ['trace_q', B * Tq * g.qWidth * trace],
    ['trace_k', B * Tk * g.kWidth * trace],
    ['trace_v', B * Tk * g.vWidth * trace],
    ['trace_scores', B * h * Tq * Tk * trace],
    ['trace_concat', B * Tq * g.oWidth * trace],
  ];
}

/** The LayerForwardArgs' fields (embind.cpp) for a plan; P(region) is a region's byte offset (0 = absent). */
function forwardFields(core, P, key, inp) {
  const { kv, kpm } = key;
  return {
    batch: inp.B, tq: inp.Tq, tk: inp.Tk, query: P('query'), key: P('key'), value: kv === 2 ? P('value') : kv === 1 ? P('key') : 0,
    causal: 0, key_padding_mask: kpm === 1 ? P('kpm') : 0, key_padding_add: kpm === 2 ? P('kpm') : 0,
    attn_mask: P('mask'), attn_mask_kind: enumValue(core, 'maskKinds', key.attnKind), output: P('output'), weights: P('weights'),
    average_weights: key.average ? 1 : 0, trace_q: P('trace_q'), trace_k: P('trace_k'), trace_v: P('trace_v'),
    trace_scores: P('trace_scores'), trace_concat: P('trace_concat'), head_mask: P('headMask'),
  };
}

/**
 * One multi-head attention layer (create it with `mha.createLayer`). Its weights live in wasm
 * memory until dispose().
 *
 *   Q = X_q·W_Q + b_Q, K = X_k·W_K + b_K, V = X_v·W_V + b_V
 *   head_i = softmax(Q_i·K_{g(i)}ᵀ·scale + mask)·V_{g(i)},  g(i) = ⌊i / (h/g)⌋
 *   output = concat(head_0 … head_{h-1})·W_O + b_O
 * (Vaswani et al. 2017, eq. 1 and §3.2.2; grouped-query: Ainslie et al. 2023.)
 */
export class Layer extends WasmObject {
  /**
   * @internal use mha.createLayer
   * @param {object} core the Emscripten module
   * @param {object} handle an initialized LayerHandle (owned from now on)
   * @param {{headDims: object|null}} config what createLayer resolved (only whether the weights were
   *   per-head is read: the rest of layer.config comes from the core)
   */
  constructor(core, handle, config) {
    super(core, handle, 'layer');
    this._addr = handle.address();  // for the plain export _mha_layer_forward (the per-call path)
    this._heap = heapViews(core);
    // The core's resolved configuration: the sizes, each head's widths, scale and columns in
    // Q | K | V | concat, and the resolved score modifiers.
    this._geometry = handle.geometry();
    const g = this._geometry;
    const headScale = Object.freeze(g.scale.slice());
    /**
     * Resolved configuration, as the core resolved it: {dModel, numHeads, kvHeads, dK, dV, kDim,
     * vDim, bias, scale, headScale, headDims}; dK/dV those of head 0; headScale every head's score
     * scale (the float32 value the core multiplies by: the `scale` option, else 1/√d_k of that head);
     * scale their common value, or null when the heads' scales differ (a per-head layer of unequal
     * d_k without a `scale` option); headDims every head's widths for a per-head layer, else null.
     * Only when set, the score modifiers: softcap (the cap), alibiSlopes (Float32Array [numHeads],
     * the default slopes when `alibi: true`), window [left, right], rope {dim, base, interleaved}
     * (dim −1: each head's own dK in a per-head layer of unequal widths).
     */
    this.config = Object.freeze({
      dModel: g.dModel, numHeads: g.numHeads, kvHeads: g.kvHeads, dK: g.dK[0], dV: g.dV[0], kDim: g.kDim, vDim: g.vDim,
      bias: g.bias,
      scale: headScale.every((s) => s === headScale[0]) ? headScale[0] : null,
      headScale,
      headDims: config.headDims ? Object.freeze({ dK: Object.freeze(g.dK.slice()), dV: Object.freeze(g.dV.slice()) }) : null,
      ...(g.softcap > 0 ? { softcap: g.softcap } : {}),
      ...(g.alibiSlopes.length ? { alibiSlopes: Float32Array.from(g.alibiSlopes) } : {}),
      ...(g.window[0] >= 0 || g.window[1] >= 0 ? { window: Object.freeze(g.window.slice()) } : {}),
      ...(g.rope ? { rope: Object.freeze({ dim: g.rope.dim, base: g.rope.base, interleaved: g.rope.interleaved }) } : {}),
    });
    this._plan = null;
  }

  /**
   * The shared forward: checks, plans, writes the inputs into wasm memory once, runs one core call.
   * @returns {object} the call's memory plan: {batched, B, Tq, Tk, needWeights, average, P(name)
   *   (byte offset of a region), output and weights (byte offsets), outputView and weightsView
   *   (their views in wasm memory, set by forward)}
   */
  _run(query, opts, mode, name) {
    this._alive(name);
    checkOptions(opts, name);
    const inp = readInputs(query, opts, this.config);
    const o = readCallOptions(opts, mode, name, this.config, inp);
    const plan = this._planFor(mode, inp, o, name);
    this._call(plan, inp, o, name);
    // Per-call values travel with the plan to forward()/trace(), which clear `out` after use.
    plan.batched = inp.batched;
    plan.out = o.out;
    return plan;
  }

  /**
   * The memory plan of a call: reused (with no heap check) while sizes and flags repeat, so a steady
   * stream of same-shaped calls allocates no wasm memory; else laid out anew, its LayerForwardArgs
   * written once (per call only the causal flag changes).
   * @throws {MHAError} OUT_OF_MEMORY
   */
  _planFor(mode, inp, o, name) {
    const key = planKey(mode, inp, o);
    if (samePlan(this._plan, key, this._staging.ptr)) return this._plan;
    const { B, Tq, Tk } = inp;
    const layout = argsLayout(this._core, 'forward');
    const { base, P } = this._stage([['args', layout, (p) => forwardFields(this._core, p, key, inp)]],
      forwardRegions(key, inp, o, this.config.numHeads, this._geometry), name,
      { fits: `${name} (B = ${B}, Tq = ${Tq}, Tk = ${Tk})`, extraBytes: this._handle.workspaceBytes(B, Tq, Tk, !inp.k) });
    this._plan = {
      ...key, base, P, args: P('args'), causalAt: (P('args') + layout.fields.causal) >>> 2, output: P('output'), weights: P('weights'),
      at: { query: P('query') / F32, key: P('key') / F32, value: P('value') / F32, kpm: P('kpm'), mask: P('mask') / F32, headMask: P('headMask') / F32 },
      batched: inp.batched, out: null, outputView: null, weightsView: null,  // views: set by forward()
    };
    return this._plan;
  }

  /** Writes the call's inputs into the plan's regions and runs the core's forward. @throws {MHAError} the core's errors */
  _call(plan, inp, o, name) {
    const { at } = plan;
    const { q, k, v } = inp;
    const { masks, headMask } = o;
    const views = this._heap.fresh();
    const heap = views.f32;
    heap.set(q.data, at.query);
    if (k) heap.set(k.data, at.key);
    if (k && v !== k) heap.set(v.data, at.value);
    if (masks.kpm) views.u8.set(masks.kpm, at.kpm);
    if (masks.kpmAdd) heap.set(masks.kpmAdd, at.kpm / F32);
    if (masks.attn) heap.set(masks.attn, at.mask);
    if (headMask) heap.set(headMask, at.headMask);
    views.u32[plan.causalAt] = o.causal ? 1 : 0;
    this._check(views.forward(this._addr, plan.args), name, inp.batched);
  }

  /**
   * Multi-head attention forward.
   * @param {any} query [B, Tq, dModel] or unbatched [Tq, dModel]; nested arrays, Tensor or {data, shape}
   * @param {object} [opts]
   * @param {any} [opts.key] [B, Tk, kDim] (cross-attention); default: the query (self-attention)
   * @param {any} [opts.value] [B, Tk, vDim]; default: the key
   * @param {boolean} [opts.causal=false] mask key j > query i
   * @param {any} [opts.keyPaddingMask] [B, Tk]; boolean true = padded key, or additive
   * @param {any} [opts.attnMask] [Tq, Tk] or [B·h, Tq, Tk] (index b·h + head); boolean or additive
   * @param {boolean} [opts.needWeights=true] return the attention weights
   * @param {boolean} [opts.averageWeights=false] average the weights over heads
   * @param {ArrayLike<number>} [opts.headMask] [h] multiplier of each head's output before W_O: 0
   *   switches a head off (ablation, Michel et al. 2019), 1 keeps it; its attention weights are
   *   still returned
   * @param {{output?: Float32Array, weights?: Float32Array}} [opts.out] write the results into
   *   these caller-owned arrays (exact lengths: B·Tq·dModel, and the weights' size; not sharing
   *   memory) instead of new ones, so repeated calls allocate no result arrays. The returned
   *   tensors wrap them.
   * @returns {{output: Tensor, weights?: Tensor}} output [B?, Tq, dModel]; weights [B?, h, Tq, Tk]
   *   (or [B?, Tq, Tk] averaged). A query row whose keys are all masked has weights 0 and a zero
   *   attention output (so its output row is b_O).
   * @throws {MHAError} SHAPE_MISMATCH (inputs, masks, an out array's length), NON_FINITE (NaN/Inf
   *   in an input, with its index), INVALID_ARGUMENT (options; out not an object of Float32Arrays,
   *   an unknown out key, out.weights without needWeights, overlapping out arrays), OUT_OF_MEMORY
   *   (with `bytes`), DISPOSED
   */
  forward(query, opts = {}) {
    const r = this._run(query, opts, 'forward', 'forward');
    const { B, Tq, Tk } = r;
    const d = this.config.dModel, h = this.config.numHeads;
    // Views of the results in wasm memory, kept with the plan until a memory growth (the call
    // itself may grow it) detaches them.
    if (r.outputView === null || r.outputView.length === 0) {
      const views = this._heap.fresh();
      r.outputView = views.floats(r.output, B * Tq * d);
      r.weightsView = r.needWeights ? views.floats(r.weights, (r.average ? B : B * h) * Tq * Tk) : null;
    }
    const out = r.out;
    r.out = null;  // do not keep the caller's arrays alive with the plan
    const res = { output: Tensor.wrap(intoOrCopy(r.outputView, out?.output), r.batched ? [B, Tq, d] : [Tq, d]) };
    if (r.needWeights) {
      const shape = r.average ? [B, Tq, Tk] : [B, h, Tq, Tk];
      res.weights = Tensor.wrap(intoOrCopy(r.weightsView, out?.weights), r.batched ? shape : shape.slice(1));
    }
    return res;
  }

  /**
   * Forward that returns every intermediate, for teaching.
   * @param {any} query as in forward()
   * @param {object} [opts] as in forward() (needWeights/averageWeights are ignored; out is refused)
   * @returns {{heads: Array<{q: Tensor, k: Tensor, v: Tensor, scores: Tensor, weights: Tensor,
   *   output: Tensor}>, concat: Tensor, output: Tensor}} per head i: q [B?, Tq, d_k], k [B?, Tk, d_k],
   *   v [B?, Tk, d_v] (the K/V head it shares under grouped-query attention), scores
   *   Q_i·K_iᵀ·scale before any mask [B?, Tq, Tk] (with RoPE, q and k are taken after the rotation,
   *   so scores = q·kᵀ·scale of the traced q and k; after the layer's softcap and ALiBi, if any;
   *   the window is a mask), weights [B?, Tq, Tk], output A_i·V_i [B?, Tq, d_v];
   *   concat [B?, Tq, Σd_v]; output [B?, Tq, dModel]
   * @throws {MHAError} as forward(); INVALID_ARGUMENT when opts.out is given
   */
  trace(query, opts = {}) {
    const r = this._run(query, opts, 'trace', 'trace');
    const { B, Tq, Tk } = r;
    const h = this.config.numHeads;
    const { qWidth: qW, kWidth: kW, vWidth: vW, oWidth: oW, dK, dV, qOff, oOff, kOff, vOff, kvHead } = this._geometry;
    const lead = r.batched ? [B] : [];
    const views = this._heap.fresh();
    // Views of the intermediates in wasm memory: the per-head tensors below copy straight out of them.
    const view = (name, n) => views.floats(r.P(name), n);
    const Q = view('trace_q', B * Tq * qW), K = view('trace_k', B * Tk * kW), V = view('trace_v', B * Tk * vW);
    const S = view('trace_scores', B * h * Tq * Tk), W = view('weights', B * h * Tq * Tk);
    const C = copyOut(view('trace_concat', B * Tq * oW));  // also returned whole, as concat
    const cols = (src, rows, width, off, w) => {
      const out = new Float32Array(B * rows * w);
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < rows; t++) {
          const s = (b * rows + t) * width + off;
          out.set(src.subarray(s, s + w), (b * rows + t) * w);
        }
      }
      return out;
    };
    const plane = (src, i) => {
      const out = new Float32Array(B * Tq * Tk);
      for (let b = 0; b < B; b++) out.set(src.subarray((b * h + i) * Tq * Tk, (b * h + i + 1) * Tq * Tk), b * Tq * Tk);
      return out;
    };
    const heads = [];
    for (let i = 0; i < h; i++) {
      const dk = dK[i], dv = dV[i], g = kvHead[i];
      heads.push({
        q: new Tensor(cols(Q, Tq, qW, qOff[i], dk), [...lead, Tq, dk]),
        k: new Tensor(cols(K, Tk, kW, kOff[g], dk), [...lead, Tk, dk]),
        v: new Tensor(cols(V, Tk, vW, vOff[g], dv), [...lead, Tk, dv]),
        scores: new Tensor(plane(S, i), [...lead, Tq, Tk]),
        weights: new Tensor(plane(W, i), [...lead, Tq, Tk]),
        output: new Tensor(cols(C, Tq, oW, oOff[i], dv), [...lead, Tq, dv]),
      });
    }
    return {
      heads,
      concat: new Tensor(C, [...lead, Tq, oW]),
      output: new Tensor(copyOut(view('output', B * Tq * this.config.dModel)), [...lead, Tq, this.config.dModel]),
    };
  }

  /**
   * A KV cache for incremental decoding with this layer (self-attention only).
   * @param {{maxLen: number, batch?: number}} opts maxLen tokens per sequence; batch (default 1)
   * @returns {KVCache}
   * @throws {MHAError} INVALID_ARGUMENT (maxLen/batch not positive integers), INVALID_CONFIG
   *   (kDim or vDim ≠ dModel), OUT_OF_MEMORY (cache bytes = 2·batch·maxLen·g·d_k·4), DISPOSED
   */
  createKVCache(opts) {
    this._alive('createKVCache');
    if (opts === null || typeof opts !== 'object') throw new MHAError('INVALID_ARGUMENT', 'createKVCache: options must be an object {maxLen, batch?}');
    const { maxLen, batch = 1 } = opts;
    for (const [key, v] of [['maxLen', maxLen], ['batch', batch]]) {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 2 ** 31 - 1) {
        throw new MHAError('INVALID_ARGUMENT', `createKVCache: ${key} must be a positive integer, got ${v === undefined ? 'undefined' : JSON.stringify(v)}`);
      }
    }
    const kvWidth = this._geometry.kWidth + this._geometry.vWidth;  // floats per cached token
    checkFits(this._core, F32 * batch * maxLen * kvWidth, `createKVCache (maxLen = ${maxLen}, batch = ${batch})`);
    const handle = initHandle(this._core, this._core.KVCacheHandle, (hd) => hd.init(this._handle, maxLen, batch), 'createKVCache');
    return new KVCache(this, handle, maxLen, batch);
  }
}

/**
 * Key/value cache for autoregressive decoding: step(x) appends the new tokens' K and V and lets
 * them attend causally over every cached token (token t sees 0..t). Equals the matching rows of
 * causal self-attention over the whole sequence.
 */
export class KVCache extends WasmObject {
  /**
   * @internal use layer.createKVCache
   * @param {Layer} layer the layer (disposes this cache with itself)
   * @param {object} handle an initialized KVCacheHandle (owned from now on)
   * @param {number} maxLen capacity in tokens per sequence
   * @param {number} batch sequences
   */
  constructor(layer, handle, maxLen, batch) {
    super(layer._core, handle, 'KV cache', layer);
    this._layer = layer;
    /** Capacity in tokens per sequence. */
    this.maxLen = maxLen;
    /** Number of sequences. */
    this.batch = batch;
  }

  /** Tokens cached so far (per sequence); 0 after dispose(). */
  get length() {
    return this._handle ? this._handle.length() : 0;
  }

  /**
   * Appends n new tokens and attends from them over the cache.
   * @param {any} x [n, dModel] (batch 1) or [B, n, dModel]
   * @param {{needWeights?: boolean, headMask?: ArrayLike<number>, out?: {output?: Float32Array, weights?: Float32Array}}} [opts]
   *   needWeights (default true); headMask as in Layer.forward; out: caller-owned arrays for the results, as in Layer.forward
   *   (the weights' length B·h·n·length grows with every step)
   * @returns {{output: Tensor, weights?: Tensor}} output [B?, n, dModel]; weights
   *   [B?, h, n, length] where length counts the new tokens too
   * @throws {MHAError} INVALID_ARGUMENT past maxLen (naming both), opts not an object,
   *   needWeights not a boolean, out as in Layer.forward; SHAPE_MISMATCH (x, an out array's
   *   length); NON_FINITE (NaN/Inf in x, with its index); OUT_OF_MEMORY (with `bytes`); DISPOSED
   */
  step(x, opts = {}) {
    this._alive('step');
    checkOptions(opts, 'step');
    const c = this._layer.config;
    const t = toFloat32(x, 'x');
    const batched = t.shape.length === 3;
    const B = batched ? t.shape[0] : 1;
    const n = t.shape[t.shape.length - 2];
    if ((t.shape.length !== 2 && t.shape.length !== 3) || B !== this.batch || t.shape[t.shape.length - 1] !== c.dModel || !(n >= 1)) {
      const exp = this.batch === 1 ? `[n, ${c.dModel}] or [1, n, ${c.dModel}]` : `[${this.batch}, n, ${c.dModel}]`;
      throw new MHAError('SHAPE_MISMATCH', `x: expected shape ${exp} with n ≥ 1, got ${fmt(t.shape)}`);
    }
    const needWeights = boolOption(opts.needWeights, 'needWeights', true);
    const headMask = headMaskOption(opts.headMask, c.numHeads, 'step');
    // the core's size rule (maxLen), asked before the step's buffers are sized
    this._check(this._handle.checkStep(n), 'step', batched);
    const len = this.length + n;
    const h = c.numHeads;
    const lead = batched ? [B] : [];
    const out = opts.out == null ? null : checkOut(opts.out, B * n * c.dModel, needWeights ? B * h * n * len : 0,
      (key) => (key === 'output' ? [...lead, n, c.dModel] : [...lead, h, n, len]), 'step');
    const { P } = this._stage([['args', argsLayout(this._core, 'kvStep'),
      (p) => ({ x: p('x'), n, output: p('output'), weights: p('weights'), head_mask: p('headMask') })]],
    [['x', t.data], ['output', B * n * c.dModel * F32], ['weights', needWeights ? B * h * n * len * F32 : 0], ['headMask', headMask]], 'step');
    this._check(this._handle.step(P('args')), 'step', batched);
    const views = this._layer._heap.fresh();  // the step may have grown the memory
    const result = { output: Tensor.wrap(intoOrCopy(views.floats(P('output'), B * n * c.dModel), out?.output), [...lead, n, c.dModel]) };
    if (needWeights) result.weights = Tensor.wrap(intoOrCopy(views.floats(P('weights'), B * h * n * len), out?.weights), [...lead, h, n, len]);
    return result;
  }

  /** Forgets every cached token; keeps the memory. @throws {MHAError} DISPOSED */
  reset() {
    this._alive('reset');
    this._handle.reset();
  }
}
