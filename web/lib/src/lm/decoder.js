/**
 * The JS side of the core's decoder-only language model (cpp/include/mha/decoder.hpp): a model's
 * configuration and weights go into wasm memory once (block by block), then each forward or KV-cache step is one
 * call that takes token ids and returns next-token log-probabilities (and, on request, every
 * layer's attention weights). Used by model.js; every layer numeric runs in the core.
 * @module decoder
 */
import { MHAError, coreError } from '../engine/errors.js';
import { Staging, Layout, checkFits, heapViews, writeBlock } from '../engine/memory.js';
import { scoreModsOption } from '../engine/scoremods.js';
import { blockLayout, configFields, layerWeightFields } from '../engine/blocks.js';
import { enumValue } from '../engine/core-tables.js';
import { WasmObject, initHandle } from '../engine/handle.js';

const F32 = 4;
/** Bytes of a weight array: 2 per value of a Uint16Array (16-bit weights), else 4. */
const bytesOf = (a) => a.length * (a instanceof Uint16Array ? 2 : F32);
/** Writes a weight array (Float32Array, or Uint16Array of 16-bit values) at byte offset `at`. */
function writeArray(views, at, a) {
  if (a instanceof Uint16Array) new Uint16Array(views.f32.buffer, at, a.length).set(a);
  else views.f32.set(a, at / F32);
}
/** The core's mha::WeightType values. */
const WEIGHT_TYPES = { float32: 0, float16: 1, bfloat16: 2 };

/**
 * A decoder in wasm memory. Its lifecycle is WasmObject's (engine/handle.js): after dispose() every
 * method throws DISPOSED naming the call (forward: "run", createCache: "generator").
 * @internal created by model.js
 */
export class Decoder extends WasmObject {
  /**
   * @param {object} core the Emscripten module
   * @param {object} spec `{vocabSize, numLayers, dFF, context, norm, normEps, mlp, bias, tied, dModel,
   *   numHeads, kvHeads, attnBias, rope, weightType, weights}`: context 0 = no learned position table; norm one
   *   of 'layernorm', 'rmsnorm'; mlp one of 'relu', 'gelu', 'gelu_tanh', 'swiglu'; rope null or
   *   {base, interleaved}; weights {tokEmb [V·d], posEmb [C·d] | null, normF {weight, bias}, lmHead
   *   [d·V] | null, lmHeadBias [V] | null, layers: [{norm1, norm2, wQ, wK, wV, wO, bQ, bK, bV, bO,
   *   wFc, bFc, wUp, bUp, wProj, bProj}]}: matrices row-major [in, out]; weightType 'float32'
   *   (default: every array a Float32Array), 'float16' or 'bfloat16': the matrices (tokEmb, lmHead,
   *   wQ, wK, wV, wO, wFc, wUp, wProj) are Uint16Arrays of 16-bit values, which the core keeps
   *   16-bit (half the memory) and widens exactly as it computes; every other array is a Float32Array
   * @throws {MHAError} the core's errors (INVALID_CONFIG, NON_FINITE, OUT_OF_MEMORY …)
   */
  constructor(core, spec) {
    super(core, Decoder._build(core, spec), 'model');
    this.spec = spec;
  }

  /**
   * Creates the core's decoder from `spec` (see the constructor), staging the weights outside the
   * blocks, then each block.
   * @returns {object} the initialized DecoderHandle
   * @throws {MHAError} the core's errors; INVALID_ARGUMENT (numLayers ≠ the blocks given)
   */
  static _build(core, spec) {
    const L = blockLayout(core, 'decoder');
    const mods = spec.rope ? scoreModsOption({ rope: { base: spec.rope.base, interleaved: spec.rope.interleaved } }) : null;
    const w = spec.weights;
    // The weights go into wasm memory in stages, so that the heap (which never shrinks) holds the
    // core's copy and at most one stage: the weights outside the blocks with the init block, then
    // each block in one reused staging area sized for the largest.
    const plan = () => {
      const lay = new Layout(), arrays = [];
      return { lay, arrays, add(name, a) { lay.add(name, a ? bytesOf(a) : 0); if (a) arrays.push([name, a]); } };   // absent: address 0
    };
    const globals = plan();
    globals.add('tokEmb', w.tokEmb); globals.add('posEmb', w.posEmb);
    globals.add('normFW', w.normF.weight); globals.add('normFB', w.normF.bias);
    globals.add('lmHead', w.lmHead); globals.add('lmHeadBias', w.lmHeadBias);
    const attention = blockLayout(core, 'layer');
    globals.lay.add('attention', attention.bytes);
    globals.lay.add('init', L.init.bytes);
    const layerKeys = ['wQ', 'wK', 'wV', 'wO', 'bQ', 'bK', 'bV', 'bO', 'wFc', 'bFc', 'wUp', 'bUp', 'wProj', 'bProj'];
    const blockPlan = (lw) => {
      const b = plan();
      b.add('n1w', lw.norm1.weight); b.add('n1b', lw.norm1.bias); b.add('n2w', lw.norm2.weight); b.add('n2b', lw.norm2.bias);
      for (const k of layerKeys) b.add(k, lw[k]);
      b.lay.add('layer', L.layer.bytes);
      return b;
    };
    let blockBytes = 0, weightBytes = 0;
    for (const [, a] of globals.arrays) weightBytes += bytesOf(a);
    for (const lw of w.layers) {
      const b = blockPlan(lw);
      blockBytes = Math.max(blockBytes, b.lay.total);
      for (const [, a] of b.arrays) weightBytes += bytesOf(a);
    }
    // The core's copy of every weight (a tied head is the embedding's only copy; panel padding is
    // under 1 %, its own check is exact), the staged globals and one staged block.
    checkFits(core, globals.lay.total + weightBytes + blockBytes, 'loadModel');
    const staging = new Staging(core);
    const handle = new core.DecoderHandle();
    try {
      const write = (p, base) => {
        const views = heapViews(core).fresh();  // a core call may have grown the memory
        for (const [name, a] of p.arrays) writeArray(views, p.lay.ptr(base, name), a);
        return (name) => p.lay.ptr(base, name);
      };
      const G = write(globals, staging.ensure(globals.lay.total, 'loadModel'));
      // the attention's configuration as a LayerBlock (its weight fields unused: the blocks carry them)
      writeBlock(core, attention, G('attention'), {
        ...configFields({ dModel: spec.dModel, numHeads: spec.numHeads, kvHeads: spec.kvHeads, bias: spec.attnBias }, mods, 0, 0),
        ...layerWeightFields(),
      }, 'loadModel');
      writeBlock(core, L.init, G('init'), {
        vocab_size: spec.vocabSize, num_layers: spec.numLayers, d_ff: spec.dFF, context: spec.context,
        norm: enumValue(core, 'normKinds', spec.norm), norm_eps: spec.normEps, mlp: enumValue(core, 'mlpKinds', spec.mlp), bias: spec.bias ? 1 : 0,
        tied: spec.tied ? 1 : 0, attention: G('attention'), tok_emb: G('tokEmb'), pos_emb: G('posEmb'),
        norm_f_weight: G('normFW'), norm_f_bias: G('normFB'), lm_head: G('lmHead'), lm_head_bias: G('lmHeadBias'), layers: 0,
        weight_type: WEIGHT_TYPES[spec.weightType ?? 'float32'],
      }, 'loadModel');
      if (handle.init(G('init')) !== 0) throw coreError(core, 'loadModel');
      if (w.layers.length !== spec.numLayers)
        throw new MHAError('INVALID_ARGUMENT', `loadModel: weights: ${spec.numLayers} blocks expected (numLayers), got ${w.layers.length}`);
      staging.free();  // the globals are in the core: their staging area takes the blocks
      const base = staging.ensure(blockBytes, 'loadModel');
      for (const lw of w.layers) {
        const b = blockPlan(lw);
        const p = write(b, base);
        writeBlock(core, L.layer, p('layer'), {
          norm1_weight: p('n1w'), norm1_bias: p('n1b'), norm2_weight: p('n2w'), norm2_bias: p('n2b'),
          w_q: p('wQ'), w_k: p('wK'), w_v: p('wV'), w_o: p('wO'), b_q: p('bQ'), b_k: p('bK'), b_v: p('bV'), b_o: p('bO'),
          w_fc: p('wFc'), b_fc: p('bFc'), w_up: p('wUp'), b_up: p('bUp'), w_proj: p('wProj'), b_proj: p('bProj'),
        }, 'loadModel');
        if (handle.addBlock(p('layer')) !== 0) throw coreError(core, 'loadModel');
      }
    } catch (e) {
      handle.delete();
      throw e;
    } finally {
      staging.free();
    }
    return handle;
  }

  /**
   * Writes a call block and its inputs into `staging`; returns the byte offsets of the results.
   * n tokens per sequence, B sequences, `len` keys (the cache length after a step; n in a forward).
   */
  static _call(core, staging, ids, B, n, len, opts, spec, what) {
    const L = blockLayout(core, 'decoder');
    const { numLayers: nl, numHeads: h, vocabSize: V } = spec;
    const lastOnly = !!opts.lastOnly;
    const lay = new Layout();
    lay.add('call', L.call.bytes);
    lay.add('ids', ids.length * 4);
    lay.add('headMask', opts.headMask ? nl * h * F32 : 0);
    const nLogp = (lastOnly ? B : B * n) * V;
    lay.add('logp', nLogp * F32);
    const nW = opts.weights ? nl * B * h * n * len : 0;
    lay.add('w', nW * F32);
    checkFits(core, lay.total - staging.bytes, `${what} (B = ${B}, T = ${n})`);
    const base = staging.ensure(lay.total, what);
    const P = (name) => lay.ptr(base, name);
    const views = heapViews(core).fresh();
    new Int32Array(views.u32.buffer, P('ids'), ids.length).set(ids);
    if (opts.headMask) views.f32.set(opts.headMask, P('headMask') / F32);
    writeBlock(core, L.call, P('call'), {
      batch: B, seq_len: n, ids: P('ids'), head_mask: P('headMask'), log_probs: P('logp'), last_only: lastOnly ? 1 : 0, weights: P('w'),
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
    this._alive('run');
    const n = ids.length / B;
    const r = Decoder._call(this._core, this._staging, ids, B, n, n, opts, this.spec, 'run');
    this._check(this._handle.forward(r.block), 'run');
    return Decoder._results(this._core, r);
  }

  /**
   * A KV cache of maxLen tokens for `batch` sequences (see DecoderCache).
   * @throws {MHAError} INVALID_ARGUMENT (maxLen beyond the position table), OUT_OF_MEMORY, DISPOSED
   */
  createCache(maxLen, batch = 1) {
    this._alive('generator');
    const handle = initHandle(this._core, this._core.DecoderCacheHandle, (hd) => hd.init(this._handle, maxLen, batch), 'generator');
    return new DecoderCache(this, handle, batch);
  }
}

/**
 * The KV caches of every block of a Decoder, stepped together (mha::DecoderCache). Lifecycle as
 * WasmObject's: disposed with its decoder; after dispose() step and reset throw DISPOSED.
 */
export class DecoderCache extends WasmObject {
  /**
   * @internal created by Decoder.createCache
   * @param {Decoder} decoder the decoder (disposes this cache with itself)
   * @param {object} handle an initialized DecoderCacheHandle (owned from now on)
   * @param {number} batch sequences
   */
  constructor(decoder, handle, batch) {
    super(decoder._core, handle, 'generator', decoder);
    this._dec = decoder;
    this._batch = batch;
  }

  /** Tokens cached per sequence; 0 after dispose(). */
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
    this._alive('step');
    const n = ids.length / this._batch;
    this._check(this._handle.checkStep(n), 'step');
    const r = Decoder._call(this._core, this._staging, ids, this._batch, n, this.length + n, opts, this._dec.spec, 'step');
    this._check(this._handle.step(r.block), 'step');
    return Decoder._results(this._core, r);
  }

  /** Forgets every token; keeps the memory. @throws {MHAError} DISPOSED */
  reset() {
    this._alive('reset');
    this._handle.reset();
  }
}
