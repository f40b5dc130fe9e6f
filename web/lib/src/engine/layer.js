/**
 * Layer and KVCache: the JS side of one attention layer living in wasm memory.
 * @module layer
 */
import { MHAError, coreError } from './errors.js';
import { Staging, Layout, checkFits, heapViews, readFloats as copyOut } from './memory.js';
import { prepareMasks } from './masks.js';
import { Tensor, toFloat32, formatShape as fmt } from './tensor.js';

const F32 = 4;

/** Frees the wasm side of layers and caches dropped without dispose(). */
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => { try { held.release(); } catch { /* module gone */ } })
  : null;

function makeRelease(handle, staging) {
  let done = false;
  return {
    release() {
      if (done) return;
      done = true;
      staging.free();
      handle.delete();
    },
  };
}

/** The core's ForwardBlock layout ({bytes, fields: {name: byte offset}}), asked once per module. */
const layouts = new WeakMap();
function forwardLayout(core) {
  let l = layouts.get(core);
  if (!l) layouts.set(core, (l = core.forwardLayout()));
  return l;
}

/** Throws INVALID_ARGUMENT unless opts is an options object (forward, trace and step take one). */
function checkOptions(opts, name) {
  if (opts === null || typeof opts !== 'object') throw new MHAError('INVALID_ARGUMENT', `${name}: options must be an object, got ${opts === null ? 'null' : typeof opts}`);
}

/**
 * A boolean option's value (callers read it with a literal name, `opts.causal`: a keyed read
 * `opts[key]` over several names is a megamorphic lookup on every call).
 */
function boolOption(v, key, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw new MHAError('INVALID_ARGUMENT', `${key} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The headMask option: h finite multipliers of each head's output before W_O (0 switches a head
 * off), as a Float32Array, or null when absent. Non-finite values are refused by the core (with the index).
 * @throws {MHAError} SHAPE_MISMATCH (not h numbers), INVALID_ARGUMENT (not an array of numbers)
 */
function headMaskOption(v, h, name) {
  if (v === undefined || v === null) return null;
  if (!(Array.isArray(v) || ArrayBuffer.isView(v)) || Array.prototype.some.call(v, (x) => typeof x !== 'number')) {
    throw new MHAError('INVALID_ARGUMENT', `${name}: headMask must be an array of ${h} numbers (one per head), got ${Array.isArray(v) ? JSON.stringify(v) : typeof v}`);
  }
  if (v.length !== h) throw new MHAError('SHAPE_MISMATCH', `${name}: headMask: expected shape [${h}] (numHeads), got [${v.length}]`);
  return Float32Array.from(v);
}

/**
 * Checks the `out` option of forward/step: caller-owned Float32Arrays the results are written
 * into instead of new arrays. nOut / nWeights: the float counts of the call's results (nWeights 0:
 * no weights); shapeOf(key) gives a result's shape, for the error message only.
 * @returns {{output: Float32Array|null, weights: Float32Array|null}}
 * @throws {MHAError} INVALID_ARGUMENT (not a plain object, an unknown key, not a Float32Array,
 *   weights without needWeights, output and weights sharing memory), SHAPE_MISMATCH (a length
 *   other than the result's, naming both)
 */
function checkOut(out, nOut, nWeights, shapeOf, name) {
  if (typeof out !== 'object' || ArrayBuffer.isView(out) || Array.isArray(out)) {
    throw new MHAError('INVALID_ARGUMENT', `${name}: out must be an object {output?, weights?} of Float32Arrays, got ${ArrayBuffer.isView(out) ? out.constructor.name : Array.isArray(out) ? 'an array' : typeof out}`);
  }
  for (const key in out) {
    if (key !== 'output' && key !== 'weights') throw new MHAError('INVALID_ARGUMENT', `${name}: out.${key} is not a result (out takes output and weights)`);
  }
  const pick = (key, n) => {
    const a = out[key];
    if (a == null) return null;
    if (!(a instanceof Float32Array)) throw new MHAError('INVALID_ARGUMENT', `${name}: out.${key} must be a Float32Array, got ${a?.constructor?.name ?? typeof a}`);
    if (n === 0) throw new MHAError('INVALID_ARGUMENT', `${name}: out.${key} given, but this call returns no ${key} (needWeights: false)`);
    if (a.length !== n) throw new MHAError('SHAPE_MISMATCH', `${name}: out.${key} must hold ${n} floats (${fmt(shapeOf(key))}), got ${a.length}`);
    return a;
  };
  const o = pick('output', nOut), w = pick('weights', nWeights);
  if (o && w && o.buffer === w.buffer && o.byteOffset < w.byteOffset + w.byteLength && w.byteOffset < o.byteOffset + o.byteLength) {
    throw new MHAError('INVALID_ARGUMENT', `${name}: out.output and out.weights overlap (they must not share memory)`);
  }
  return { output: o, weights: w };
}

/** The result in `dst` (filled from the wasm view `src`) when given, else a new copy of `src`. */
function intoOrCopy(src, dst) {
  if (!dst) return copyOut(src);
  dst.set(src);
  return dst;
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
export class Layer {
  /**
   * @internal use mha.createLayer
   * @param {{headDims: object|null}} config what createLayer resolved (only whether the weights were
   *   per-head is read: the rest of layer.config comes from the core)
   */
  constructor(core, handle, config) {
    this._core = core;
    this._handle = handle;
    this._addr = handle.address();  // for the plain export _mha_layer_forward (the per-call path)
    this._heap = heapViews(core);
    this._staging = new Staging(core);
    this._caches = new Set();
    this._release = makeRelease(handle, this._staging);
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
    registry?.register(this, this._release, this);
  }

  /** True after dispose(). */
  get disposed() { return this._handle === null; }

  _alive(what) {
    if (this._handle === null) throw new MHAError('DISPOSED', `${what}: this layer was disposed`);
  }

  /**
   * The shared forward: validates, writes inputs into wasm memory once, runs one core call.
   * @returns {object} the call's memory plan: {batched, B, Tq, Tk, needWeights, average, P(name)
   *   (byte offset of a region), output and weights (byte offsets), outputView and weightsView
   *   (their views in wasm memory, set by forward)}
   */
  _run(query, opts, mode, name) {
    this._alive(name);
    checkOptions(opts, name);
    const c = this.config;
    const core = this._core;
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
    const causal = boolOption(opts.causal, 'causal', false);
    const needWeights = mode === 'trace' ? true : boolOption(opts.needWeights, 'needWeights', true);
    const average = mode === 'trace' ? false : boolOption(opts.averageWeights, 'averageWeights', false);
    const h = c.numHeads;
    const masks = prepareMasks(opts, { B, Tq, Tk, h, batched });
    const headMask = headMaskOption(opts.headMask, h, name);
    const { qWidth: qW, kWidth: kW, vWidth: vW, oWidth: oW } = this._geometry;
    let out = null;
    if (opts.out != null) {
      if (mode === 'trace') throw new MHAError('INVALID_ARGUMENT', 'trace: out is not supported (trace returns new tensors)');
      const lead = batched ? [B] : [];
      out = checkOut(opts.out, B * Tq * c.dModel, needWeights ? (average ? B : B * h) * Tq * Tk : 0,
        (key) => (key === 'output' ? [...lead, Tq, c.dModel] : average ? [...lead, Tq, Tk] : [...lead, h, Tq, Tk]), name);
    }

    // The memory plan depends only on sizes and flags: reuse it (and skip the heap check) while
    // they repeat, so a steady stream of same-shaped calls allocates no wasm memory and checks nothing.
    const kv = k ? (v !== k ? 2 : 1) : 0;
    const kpmOn = masks.kpm ? 1 : masks.kpmAdd ? 2 : 0;  // none, boolean, additive
    let plan = this._plan;
    if (!plan || plan.mode !== mode || plan.B !== B || plan.Tq !== Tq || plan.Tk !== Tk || plan.kv !== kv ||
        plan.kpm !== kpmOn || plan.attnKind !== masks.attnKind || plan.needWeights !== needWeights || plan.hm !== (headMask !== null) ||
        plan.average !== average || plan.base !== this._staging.ptr) {
      const lay = new Layout();
      const block = forwardLayout(core);
      lay.add('args', block.bytes);
      lay.add('query', q.data.length * F32);
      lay.add('key', k ? k.data.length * F32 : 0);
      lay.add('value', k && v !== k ? v.data.length * F32 : 0);
      lay.add('kpm', masks.kpm ? masks.kpm.length : masks.kpmAdd ? masks.kpmAdd.length * F32 : 0);
      lay.add('mask', masks.attn ? masks.attn.length * F32 : 0);
      lay.add('hm', headMask ? h * F32 : 0);
      // The output has the query's shape and the core reads each query row before it writes that
      // row's output (ForwardArgs::output): it is written over the query, one activation less.
      lay.alias('output', 'query');
      lay.add('weights', needWeights ? (average ? B * Tq * Tk : B * h * Tq * Tk) * F32 : 0);
      if (mode === 'trace') {
        lay.add('tq', B * Tq * qW * F32);
        lay.add('tk', B * Tk * kW * F32);
        lay.add('tv', B * Tk * vW * F32);
        lay.add('ts', B * h * Tq * Tk * F32);
        lay.add('tc', B * Tq * oW * F32);
      }
      checkFits(core, lay.total + this._handle.workspaceBytes(B, Tq, Tk, !k) - this._staging.bytes, `${name} (B = ${B}, Tq = ${Tq}, Tk = ${Tk})`);
      const base = this._staging.ensure(lay.total, name);
      const P = (n) => lay.ptr(base, n);
      // The forward's arguments (the core's ForwardBlock, laid out by embind.cpp), written once per
      // plan into the staging memory; per call only the causal flag changes.
      const u32 = this._heap.fresh().u32;
      const at = (field) => (P('args') + block.fields[field]) >>> 2;
      const fields = {
        batch: B, tq: Tq, tk: Tk, query: P('query'), key: P('key'), value: k ? (v !== k ? P('value') : P('key')) : 0,
        causal: 0, key_padding_mask: kpmOn === 1 ? P('kpm') : 0, key_padding_add: kpmOn === 2 ? P('kpm') : 0,
        attn_mask: P('mask'), attn_mask_kind: masks.attnKind, output: P('output'), weights: P('weights'),
        average_weights: average ? 1 : 0, trace_q: P('tq'), trace_k: P('tk'), trace_v: P('tv'), trace_scores: P('ts'),
        trace_concat: P('tc'), head_mask: P('hm'),
      };
      for (const field of Object.keys(block.fields)) {
        if (!(field in fields)) throw new Error(`forward: the core's ForwardBlock has a field ${field} this API does not fill`);
        u32[at(field)] = fields[field];
      }
      plan = this._plan = {
        mode, B, Tq, Tk, kv, kpm: kpmOn, attnKind: masks.attnKind, needWeights, average, hm: headMask !== null, base, P,
        args: P('args'), causalAt: at('causal'), output: P('output'), weights: P('weights'),
        at: { query: P('query') / F32, key: P('key') / F32, value: P('value') / F32, kpm: P('kpm'), mask: P('mask') / F32, hm: P('hm') / F32 },
        batched, out: null, outputView: null, weightsView: null,  // views: set by forward()
      };
    }
    const { at } = plan;
    const views = this._heap.fresh();
    const heap = views.f32;
    heap.set(q.data, at.query);
    if (k) heap.set(k.data, at.key);
    if (k && v !== k) heap.set(v.data, at.value);
    if (masks.kpm) views.u8.set(masks.kpm, at.kpm);
    if (masks.kpmAdd) heap.set(masks.kpmAdd, at.kpm / F32);
    if (masks.attn) heap.set(masks.attn, at.mask);
    if (headMask) heap.set(headMask, at.hm);
    views.u32[plan.causalAt] = causal ? 1 : 0;
    const status = views.forward(this._addr, plan.args);
    if (status !== 0) throw coreError(core, name, batched);
    // Per-call values travel with the plan to forward()/trace(), which clear `out` after use.
    plan.batched = batched;
    plan.out = out;
    return plan;
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
    const Q = view('tq', B * Tq * qW), K = view('tk', B * Tk * kW), V = view('tv', B * Tk * vW);
    const S = view('ts', B * h * Tq * Tk), W = view('weights', B * h * Tq * Tk);
    const C = copyOut(view('tc', B * Tq * oW));  // also returned whole, as concat
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
    const handle = new this._core.KVCacheHandle();
    const status = handle.init(this._handle, maxLen, batch);
    if (status !== 0) {
      const err = coreError(this._core, 'createKVCache');
      handle.delete();
      throw err;
    }
    const cache = new KVCache(this, handle, maxLen, batch);
    this._caches.add(cache);
    return cache;
  }

  /** Frees the layer's wasm memory and every KV cache made from it. Idempotent. */
  dispose() {
    if (this._handle === null) return;
    for (const c of this._caches) c.dispose();
    this._caches.clear();
    registry?.unregister(this);
    this._release.release();
    this._handle = null;
  }
}

/**
 * Key/value cache for autoregressive decoding: step(x) appends the new tokens' K and V and lets
 * them attend causally over every cached token (token t sees 0..t). Equals the matching rows of
 * causal self-attention over the whole sequence.
 */
export class KVCache {
  /** @internal use layer.createKVCache */
  constructor(layer, handle, maxLen, batch) {
    this._layer = layer;
    this._core = layer._core;
    this._handle = handle;
    this._staging = new Staging(this._core);
    this._release = makeRelease(handle, this._staging);
    /** Capacity in tokens per sequence. */
    this.maxLen = maxLen;
    /** Number of sequences. */
    this.batch = batch;
    registry?.register(this, this._release, this);
  }

  /** Tokens cached so far (per sequence). */
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
    if (this._handle === null) throw new MHAError('DISPOSED', 'step: this KV cache was disposed');
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
    if (this._handle.checkStep(n) !== 0) throw coreError(this._core, 'step', batched);
    const len = this.length + n;
    const h = c.numHeads;
    const lead = batched ? [B] : [];
    const out = opts.out == null ? null : checkOut(opts.out, B * n * c.dModel, needWeights ? B * h * n * len : 0,
      (key) => (key === 'output' ? [...lead, n, c.dModel] : [...lead, h, n, len]), 'step');
    const lay = new Layout();
    lay.add('x', t.data.length * F32);
    lay.add('out', B * n * c.dModel * F32);
    lay.add('w', needWeights ? B * h * n * len * F32 : 0);
    lay.add('hm', headMask ? h * F32 : 0);
    const base = this._staging.ensure(lay.total, 'step');
    const core = this._core;
    const views = this._layer._heap;
    views.fresh().f32.set(t.data, lay.ptr(base, 'x') / F32);
    if (headMask) views.f32.set(headMask, lay.ptr(base, 'hm') / F32);
    const status = this._handle.step(lay.ptr(base, 'x'), n, lay.ptr(base, 'out'), lay.ptr(base, 'w'), lay.ptr(base, 'hm'));
    if (status !== 0) throw coreError(core, 'step', batched);
    views.fresh();  // the step may have grown the memory
    const result = { output: Tensor.wrap(intoOrCopy(views.floats(lay.ptr(base, 'out'), B * n * c.dModel), out?.output), [...lead, n, c.dModel]) };
    if (needWeights) result.weights = Tensor.wrap(intoOrCopy(views.floats(lay.ptr(base, 'w'), B * h * n * len), out?.weights), [...lead, h, n, len]);
    return result;
  }

  /** Forgets every cached token; keeps the memory. */
  reset() {
    if (this._handle === null) throw new MHAError('DISPOSED', 'reset: this KV cache was disposed');
    this._handle.reset();
  }

  /** Frees the cache's wasm memory. Idempotent. */
  dispose() {
    if (this._handle === null) return;
    registry?.unregister(this);
    this._release.release();
    this._handle = null;
    this._layer._caches.delete(this);
  }
}
