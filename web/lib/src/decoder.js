/**
 * The JS side of the core's decoder-only language model (cpp/include/mha/decoder.hpp): a model's
 * configuration and weights go into wasm memory once, then each forward or KV-cache step is one
 * call that takes token ids and returns next-token log-probabilities (and, on request, every
 * layer's attention weights). Used by model.js; every layer numeric runs in the core.
 * @module decoder
 */
import { MHAError, coreError } from './errors.js';
import { Staging, Layout, checkFits, heapViews, writeBlock } from './memory.js';
import { scoreModsOption } from './scoremods.js';
import { blockLayout, configFields } from './blocks.js';

const F32 = 4;
const NORMS = ['layernorm', 'rmsnorm'];
const MLPS = ['relu', 'gelu', 'gelu_tanh', 'swiglu'];

/** Frees the wasm side of decoders and caches dropped without dispose(). */
const registry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((held) => { try { held.release(); } catch { /* module gone */ } })
  : null;

function releaser(handle, staging) {
  let done = false;
  return { release() { if (done) return; done = true; staging.free(); handle.delete(); } };
}

/** The core's decoder block layouts ({init, layer, call}), asked once per module. */
const layouts = new WeakMap();
function decoderLayout(core) {
  let l = layouts.get(core);
  if (!l) layouts.set(core, (l = core.decoderLayout()));
  return l;
}

/**
 * A decoder in wasm memory.
 * @internal created by model.js
 */
export class Decoder {
  /**
   * @param {object} core the Emscripten module
   * @param {object} spec `{vocabSize, numLayers, dFF, context, norm, normEps, mlp, bias, tied, dModel,
   *   numHeads, kvHeads, attnBias, rope, weights}`: context 0 = no learned position table; norm one
   *   of 'layernorm', 'rmsnorm'; mlp one of 'relu', 'gelu', 'gelu_tanh', 'swiglu'; rope null or
   *   {base, interleaved}; weights {tokEmb [V·d], posEmb [C·d] | null, normF {weight, bias}, head
   *   [d·V] | null, headBias [V] | null, layers: [{norm1, norm2, wQ, wK, wV, wO, bQ, bK, bV, bO,
   *   wFc, bFc, wUp, bUp, wProj, bProj}]}: Float32Arrays, matrices row-major [in, out]
   * @throws {MHAError} the core's errors (INVALID_CONFIG, NON_FINITE, OUT_OF_MEMORY …)
   */
  constructor(core, spec) {
    this._core = core;
    this.spec = spec;
    const L = decoderLayout(core);
    const mods = spec.rope ? scoreModsOption({ rope: { base: spec.rope.base, interleaved: spec.rope.interleaved } }) : null;
    const w = spec.weights;
    const arrays = [];   // [Float32Array, field setter] written after the layout is known
    const lay = new Layout();
    const add = (name, a) => { if (a) { lay.add(name, a.length * F32); arrays.push([name, a]); } };
    add('tokEmb', w.tokEmb); add('posEmb', w.posEmb); add('normFW', w.normF.weight); add('normFB', w.normF.bias);
    add('head', w.head); add('headBias', w.headBias);
    const layerKeys = ['wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO', 'wFc', 'bFc', 'wUp', 'bUp', 'wProj', 'bProj'];
    w.layers.forEach((lw, l) => {
      add(`${l}.n1w`, lw.norm1.weight); add(`${l}.n1b`, lw.norm1.bias);
      add(`${l}.n2w`, lw.norm2.weight); add(`${l}.n2b`, lw.norm2.bias);
      for (const k of layerKeys) add(`${l}.${k}`, lw[k]);
    });
    lay.add('layers', L.layer.bytes * w.layers.length);
    const attention = blockLayout(core, 'layer');
    lay.add('attention', attention.bytes);
    lay.add('init', L.init.bytes);
    checkFits(core, lay.total * 3, 'loadModel');  // the staged weights and the core's packed copy of them
    const staging = new Staging(core);
    const handle = new core.DecoderHandle();
    try {
      const base = staging.ensure(lay.total, 'loadModel');
      const P = (name) => lay.ptr(base, name);
      const views = heapViews(core).fresh();
      for (const [name, a] of arrays) views.f32.set(a, P(name) / F32);
      w.layers.forEach((lw, l) => {
        const p = (k) => P(`${l}.${k}`);
        writeBlock(core, L.layer, P('layers') + l * L.layer.bytes, {
          norm1_weight: p('n1w'), norm1_bias: p('n1b'), norm2_weight: p('n2w'), norm2_bias: p('n2b'),
          w_q: p('wQ'), w_k: p('wK'), w_v: p('wV'), w_o: p('wO'), b_q: p('bQ'), b_k: p('bK'), b_v: p('bV'), b_o: p('bO'),
          w_fc: p('wFc'), b_fc: p('bFc'), w_up: p('wUp'), b_up: p('bUp'), w_proj: p('wProj'), b_proj: p('bProj'),
        }, 'loadModel');
      });
      // the attention's configuration as a LayerBlock (its weight fields unused: the blocks carry them)
      writeBlock(core, attention, P('attention'), {
        ...configFields({ dModel: spec.dModel, numHeads: spec.numHeads, kvHeads: spec.kvHeads, bias: spec.attnBias }, mods, 0, 0),
        wq: 0, wk: 0, wv: 0, wo: 0, bq: 0, bk: 0, bv: 0, bo: 0,
      }, 'loadModel');
      writeBlock(core, L.init, P('init'), {
        vocab_size: spec.vocabSize, num_layers: spec.numLayers, d_ff: spec.dFF, context: spec.context,
        norm: NORMS.indexOf(spec.norm), norm_eps: spec.normEps, mlp: MLPS.indexOf(spec.mlp), bias: spec.bias ? 1 : 0,
        tied: spec.tied ? 1 : 0, attention: P('attention'), tok_emb: P('tokEmb'), pos_emb: P('posEmb'),
        norm_f_weight: P('normFW'), norm_f_bias: P('normFB'), head: P('head'), head_bias: P('headBias'), layers: P('layers'),
      }, 'loadModel');
      if (handle.init(P('init')) !== 0) throw coreError(core, 'loadModel');
    } catch (e) {
      handle.delete();
      throw e;
    } finally {
      staging.free();
    }
    this._handle = handle;
    this._staging = new Staging(core);
    this._release = releaser(handle, this._staging);
    this._caches = new Set();
    registry?.register(this, this._release, this);
  }

  /**
   * Writes a call block and its inputs into `staging`; returns the byte offsets of the results.
   * n tokens per sequence, B sequences, `len` keys (the cache length after a step; n in a forward).
   */
  static _call(core, staging, ids, B, n, len, opts, spec, what) {
    const L = decoderLayout(core);
    const { numLayers: nl, numHeads: h, vocabSize: V } = spec;
    const lastOnly = !!opts.lastOnly;
    const lay = new Layout();
    lay.add('call', L.call.bytes);
    lay.add('ids', ids.length * 4);
    lay.add('hm', opts.headMask ? nl * h * F32 : 0);
    const nLogp = (lastOnly ? B : B * n) * V;
    lay.add('logp', nLogp * F32);
    const nW = opts.weights ? nl * B * h * n * len : 0;
    lay.add('w', nW * F32);
    checkFits(core, lay.total - staging.bytes, `${what} (B = ${B}, T = ${n})`);
    const base = staging.ensure(lay.total, what);
    const P = (name) => lay.ptr(base, name);
    const views = heapViews(core).fresh();
    new Int32Array(views.u32.buffer, P('ids'), ids.length).set(ids);
    if (opts.headMask) views.f32.set(opts.headMask, P('hm') / F32);
    writeBlock(core, L.call, P('call'), {
      batch: B, seq_len: n, ids: P('ids'), head_mask: P('hm'), log_probs: P('logp'), last_only: lastOnly ? 1 : 0, weights: P('w'),
    }, what);
    return { block: P('call'), logp: P('logp'), nLogp, w: P('w'), nW };
  }

  static _results(core, r) {
    const views = heapViews(core).fresh();  // the call may have grown the memory
    return {
      logProbs: views.floats(r.logp, r.nLogp).slice(),
      weights: r.nW ? views.floats(r.w, r.nW).slice() : null,
    };
  }

  /**
   * Runs the model over B sequences of n ids (causal, positions from 0).
   * @param {Int32Array} ids [B·n]
   * @param {number} B sequences
   * @param {{headMask?: Float32Array|null, weights?: boolean, lastOnly?: boolean}} opts headMask
   *   [L·h]; weights: return every layer's attention weights [L, B, h, n, n]; lastOnly: log-probs of
   *   the last position only
   * @returns {{logProbs: Float32Array, weights: Float32Array|null}} logProbs [B, n, V] (or [B, V])
   * @throws {MHAError} the core's errors (an id outside [0, V), too long for the position table …), DISPOSED
   */
  forward(ids, B, opts = {}) {
    if (!this._handle) throw new MHAError('DISPOSED', 'run: this model was disposed');
    const n = ids.length / B;
    const r = Decoder._call(this._core, this._staging, ids, B, n, n, opts, this.spec, 'run');
    if (this._handle.forward(r.block) !== 0) throw coreError(this._core, 'run');
    return Decoder._results(this._core, r);
  }

  /**
   * A KV cache of maxLen tokens for `batch` sequences (see DecoderCache).
   * @throws {MHAError} INVALID_ARGUMENT (maxLen beyond the position table), OUT_OF_MEMORY, DISPOSED
   */
  createCache(maxLen, batch = 1) {
    if (!this._handle) throw new MHAError('DISPOSED', 'generator: this model was disposed');
    const handle = new this._core.DecoderCacheHandle();
    if (handle.init(this._handle, maxLen, batch) !== 0) {
      const e = coreError(this._core, 'generator');
      handle.delete();
      throw e;
    }
    const c = new DecoderCache(this, handle, batch);
    this._caches.add(c);
    return c;
  }

  /** Frees the decoder and its caches. Idempotent. */
  dispose() {
    if (!this._handle) return;
    for (const c of this._caches) c.dispose();
    registry?.unregister(this);
    this._release.release();
    this._handle = null;
  }
}

/** The KV caches of every block of a Decoder, stepped together (mha::DecoderCache). */
export class DecoderCache {
  /** @internal */
  constructor(decoder, handle, batch) {
    this._dec = decoder;
    this._core = decoder._core;
    this._handle = handle;
    this._batch = batch;
    this._staging = new Staging(this._core);
    this._release = releaser(handle, this._staging);
    registry?.register(this, this._release, this);
  }

  /** Tokens cached per sequence. */
  get length() {
    return this._handle ? this._handle.length() : 0;
  }

  /**
   * Feeds n new ids per sequence at positions length … length+n−1.
   * @param {Int32Array} ids [B·n]
   * @param {{headMask?: Float32Array|null, weights?: boolean, lastOnly?: boolean}} opts as Decoder.forward;
   *   weights [L, B, h, n, length+n]
   * @returns {{logProbs: Float32Array, weights: Float32Array|null}}
   * @throws {MHAError} INVALID_ARGUMENT (past maxLen, a bad id), DISPOSED
   */
  step(ids, opts = {}) {
    if (!this._handle) throw new MHAError('DISPOSED', 'step: this generator was disposed');
    const n = ids.length / this._batch;
    if (this._handle.checkStep(n) !== 0) throw coreError(this._core, 'step');
    const r = Decoder._call(this._core, this._staging, ids, this._batch, n, this.length + n, opts, this._dec.spec, 'step');
    if (this._handle.step(r.block) !== 0) throw coreError(this._core, 'step');
    return Decoder._results(this._core, r);
  }

  /** Forgets every token; keeps the memory. */
  reset() {
    if (this._handle) this._handle.reset();
  }

  /** Frees the caches. Idempotent. */
  dispose() {
    if (!this._handle) return;
    registry?.unregister(this);
    this._release.release();
    this._handle = null;
    this._dec._caches.delete(this);
  }
}
