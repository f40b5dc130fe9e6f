/**
 * The JS side of the core's decoder-only language model (cpp/include/mha/decoder.hpp): a model's
 * configuration and weights go into wasm memory once (transformer block by transformer block),
 * then each forward or KV-cache step is one call that takes token ids and returns next-token
 * log-probabilities (and, on request, every layer's attention weights). Owned by a LanguageModel
 * (language-model.js); every layer numeric runs in the core.
 * @module decoder
 */
import { MHAError, coreError } from '../engine/errors.js';
import { checkFits, stage, stageLayout, heapViews, Staging } from '../engine/memory.js';
import { scoreModsOption } from '../engine/scoremods.js';
import { argsLayout, configFields, layerWeightFields } from '../engine/args.js';
import { enumValue } from '../engine/core-tables.js';
import { WasmObject, initHandle } from '../engine/handle.js';

const F32 = 4;
/** Bytes of a weight array: 2 per value of a Uint16Array (16-bit weights), else 4. */
const bytesOf = (a) => a.length * (a instanceof Uint16Array ? 2 : F32);
/** Bytes the staging of these regions takes (16-byte aligned, as stageLayout lays them out). */
const stagedBytes = (regions) => regions.reduce((n, [, a]) => n + (a ? Math.ceil(bytesOf(a) / 16) * 16 : 0), 0);
/** The core's mha::WeightType values. */
const WEIGHT_TYPES = { float32: 0, float16: 1, bfloat16: 2 };
/** The weights of a transformer block besides its norms, by the API's names; DecoderBlockArgs spells them w_q … b_proj. */
const BLOCK_WEIGHTS = { wQ: 'w_q', wK: 'w_k', wV: 'w_v', wO: 'w_o', bQ: 'b_q', bK: 'b_k', bV: 'b_v', bO: 'b_o',
  wFc: 'w_fc', bFc: 'b_fc', wGate: 'w_gate', bGate: 'b_gate', wUp: 'w_up', bUp: 'b_up', wProj: 'w_proj', bProj: 'b_proj' };

/** The regions of the weights outside the transformer blocks. */
function globalRegions(w) {
  return [['tokEmb', w.tokEmb], ['posEmb', w.posEmb], ['normFW', w.normF.weight], ['normFB', w.normF.bias],
    ['lmHead', w.lmHead], ['lmHeadBias', w.lmHeadBias]];
}

/** The regions of one transformer block's weights (lw: spec.weights.layers[l]). */
function blockRegions(lw) {
  return [['n1w', lw.norm1.weight], ['n1b', lw.norm1.bias], ['n2w', lw.norm2.weight], ['n2b', lw.norm2.bias],
    ...Object.keys(BLOCK_WEIGHTS).map((k) => [k, lw[k]])];
}

/** The argument structs of the decoder's init: its attention's LayerArgs and the DecoderInitArgs. */
function initArgs(core, spec) {
  const mods = spec.rope ? scoreModsOption({ rope: { base: spec.rope.base, interleaved: spec.rope.interleaved } }) : null;
  return [
    // the attention's configuration (its weight fields unused: the blocks carry them)
    ['attention', argsLayout(core, 'layer'), () => ({
      ...configFields({ dModel: spec.dModel, numHeads: spec.numHeads, kvHeads: spec.kvHeads, bias: spec.attnBias }, mods, 0, 0),
      ...layerWeightFields(),
    })],
    ['init', argsLayout(core, 'decoder').init, (P) => ({
      vocab_size: spec.vocabSize, num_layers: spec.numLayers, d_ff: spec.dFF, context: spec.context,
      norm: enumValue(core, 'normKinds', spec.norm), norm_eps: spec.normEps, mlp: enumValue(core, 'mlpKinds', spec.mlp), bias: spec.bias ? 1 : 0,
      tied: spec.tied ? 1 : 0, attention: P('attention'), tok_emb: P('tokEmb'), pos_emb: P('posEmb'),
      norm_f_weight: P('normFW'), norm_f_bias: P('normFB'), lm_head: P('lmHead'), lm_head_bias: P('lmHeadBias'), layers: 0,
      weight_type: WEIGHT_TYPES[spec.weightType ?? 'float32'],
    })],
  ];
}

/** The DecoderBlockArgs of one transformer block, pointing at its regions. */
function blockArgs(core) {
  return [['args', argsLayout(core, 'decoder').block, (P) => {
    const values = { norm1_weight: P('n1w'), norm1_bias: P('n1b'), norm2_weight: P('n2w'), norm2_bias: P('n2b') };
    for (const [k, field] of Object.entries(BLOCK_WEIGHTS)) values[field] = P(k);
    return values;
  }]];
}

/**
 * Stages a forward or KV-cache step of `owner` (a Decoder or DecoderCache): its DecoderCallArgs and
 * inputs; returns the byte offsets of the results. n tokens per sequence, B sequences, `len` keys
 * (the cache length after a step; n in a forward).
 */
function stageCall(owner, spec, ids, B, n, len, opts, what) {
  const { numLayers: nl, numHeads: h, vocabSize: V } = spec;
  const lastOnly = !!opts.lastOnly;
  const nLogp = (lastOnly ? B : B * n) * V;
  const nW = opts.weights ? nl * B * h * n * len : 0;
  const { P } = owner._stage([['call', argsLayout(owner._core, 'decoder').call, (p) => ({
    batch: B, seq_len: n, ids: p('ids'), head_mask: p('headMask'), log_probs: p('logp'), last_only: lastOnly ? 1 : 0, weights: p('w'),
  })]], [['ids', ids], ['headMask', opts.headMask], ['logp', nLogp * F32], ['w', nW * F32]], what, { fits: `${what} (B = ${B}, T = ${n})` });
  return { args: P('call'), logp: P('logp'), nLogp, w: P('w'), nW };
}

/** The results of a staged call (stageCall), copied out of wasm memory. */
function callResults(core, r) {
  const views = heapViews(core).fresh();  // the call may have grown the memory
  return {
    logProbs: views.floats(r.logp, r.nLogp).slice(),
    weights: r.nW ? views.floats(r.w, r.nW).slice() : null,
  };
}

/** Bytes the core's copy of these regions takes (its panel padding, under 1 %, is its own check). */
const weightBytesOf = (regions) => regions.reduce((n, [, a]) => n + (a ? bytesOf(a) : 0), 0);

/** The error of a block count other than numLayers. */
const blockCountError = (spec, n) => new MHAError('INVALID_ARGUMENT', `loadModel: weights: ${spec.numLayers} blocks expected (numLayers), got ${n}`);

/**
 * The core's decoder staged block by block (mha::Decoder begin / add_block): the init with the
 * weights outside the blocks when created, then each block as add() is given it, so that a
 * reader can hand the blocks one at a time and let go of each once it is in the core. The heap
 * (which never shrinks) holds the core's copy and at most one stage: the globals, then each block
 * in one reused staging area.
 * @internal Decoder._build, LanguageModel.load
 */
export class DecoderStaging {
  /**
   * Stages the init and the weights outside the blocks.
   * @param {object} core the Emscripten module
   * @param {object} spec Decoder's spec; `weights.layers` is not read
   * @param {number|null} [blockBytes] when known, the bytes the blocks take: every block's weights
   *   in the core and the largest block staged (the heap is checked for them now); null: checked at
   *   the first block, as numLayers blocks of its size
   * @throws {MHAError} the core's errors, OUT_OF_MEMORY, named "loadModel"
   */
  constructor(core, spec, blockBytes = null) {
    this._core = core;
    this._spec = spec;
    this._count = 0;
    this._checked = blockBytes !== null;
    const init = initArgs(core, spec), globals = globalRegions(spec.weights);
    // The core's copy of every weight (a tied head is the embedding's only copy), the staged
    // globals and one staged block (at most the largest; all blocks have one shape here).
    checkFits(core, stageLayout(init, []).total + stagedBytes(globals) + weightBytesOf(globals) + (blockBytes ?? 0), 'loadModel');
    this._staging = new Staging(core);
    try {
      const { P } = stage(core, this._staging, init, globals, 'loadModel');
      this._handle = initHandle(core, core.DecoderHandle, (hd) => hd.init(P('init')), 'loadModel');
    } finally {
      this._staging.free();  // the globals are in the core: the blocks' staging starts empty
    }
  }

  /**
   * Stages the next block (spec.weights.layers[l]'s shape) into the core.
   * @param {object} lw the block's weights
   * @throws {MHAError} the core's errors (NON_FINITE …); INVALID_ARGUMENT (more than numLayers blocks)
   */
  add(lw) {
    const core = this._core, block = blockArgs(core), regions = blockRegions(lw);
    if (this._count >= this._spec.numLayers) throw blockCountError(this._spec, this._count + 1);
    if (!this._checked) {
      checkFits(core, (this._spec.numLayers - this._count) * weightBytesOf(regions) + stageLayout(block, []).total + stagedBytes(regions), 'loadModel');
      this._checked = true;
    }
    const { P } = stage(core, this._staging, block, regions, 'loadModel');
    if (this._handle.addBlock(P('args')) !== 0) throw coreError(core, 'loadModel');
    this._count++;
  }

  /**
   * The staged decoder, every block in; the staging freed.
   * @returns {object} the DecoderHandle (the caller owns it)
   * @throws {MHAError} INVALID_ARGUMENT: fewer blocks than numLayers
   */
  finish() {
    if (this._count !== this._spec.numLayers) throw blockCountError(this._spec, this._count);
    this._staging.free();
    const handle = this._handle;
    this._handle = null;
    return handle;
  }

  /** Frees the half-staged decoder and the staging (after an error). Idempotent. */
  abort() {
    this._staging.free();
    this._handle?.delete();
    this._handle = null;
  }
}

/**
 * A decoder in wasm memory. Its lifecycle is WasmObject's (engine/handle.js): disposed with the
 * model that owns it; after dispose() every method throws DISPOSED ("this decoder was disposed").
 * Errors of the core carry the name of the API call a method serves (`what`: "run", "generator").
 * @internal created by LanguageModel
 */
export class Decoder extends WasmObject {
  /**
   * @param {object} core the Emscripten module
   * @param {object} spec `{vocabSize, numLayers, dFF, context, norm, normEps, mlp, bias, tied, dModel,
   *   numHeads, kvHeads, attnBias, rope, weightType, weights}`: context 0 = no learned position table; norm one
   *   of 'layernorm', 'rmsnorm'; mlp one of 'relu', 'gelu', 'gelu_tanh', 'swiglu'; rope null or
   *   {base, interleaved}; weights {tokEmb [V·d], posEmb [C·d] | null, normF {weight, bias}, lmHead
   *   [d·V] | null, lmHeadBias [V] | null, layers: [{norm1, norm2, wQ, wK, wV, wO, bQ, bK, bV, bO,
   *   wFc, bFc, wGate, bGate, wUp, bUp, wProj, bProj}]}: one entry per transformer block, matrices
   *   row-major [in, out]; wFc/bFc the input map of a ReLU or GELU MLP, wGate/bGate (SwiGLU's gate)
   *   and wUp/bUp those of SwiGLU; weightType 'float32' (default: every array a Float32Array),
   *   'float16' or 'bfloat16': the matrices (tokEmb, lmHead, wQ, wK, wV, wO, wFc, wGate, wUp, wProj)
   *   are Uint16Arrays of 16-bit values, which the core keeps 16-bit (half the memory) and widens
   *   exactly as it computes; every other array is a Float32Array
   * @param {WasmObject|null} [parent] disposes this decoder with itself (its LanguageModel)
   * @param {object|null} [handle] the core's decoder already staged from spec (DecoderStaging's
   *   finish(): its blocks came one by one), owned from now on; null: staged here from spec's blocks
   * @throws {MHAError} the core's errors (INVALID_CONFIG, NON_FINITE, OUT_OF_MEMORY …), named "loadModel"
   */
  constructor(core, spec, parent = null, handle = null) {
    super(core, handle ?? Decoder._build(core, spec), 'decoder', parent);
    this.spec = spec;
  }

  /**
   * Creates the core's decoder from `spec` (see the constructor), all its blocks given: a
   * DecoderStaging fed every block.
   * @returns {object} the initialized DecoderHandle
   * @throws {MHAError} the core's errors; INVALID_ARGUMENT (numLayers ≠ the blocks given)
   */
  static _build(core, spec) {
    const w = spec.weights, block = blockArgs(core);
    let blockBytes = 0, stageBytes = 0;
    for (const lw of w.layers) {
      const regions = blockRegions(lw);
      blockBytes += weightBytesOf(regions);
      stageBytes = Math.max(stageBytes, stageLayout(block, []).total + stagedBytes(regions));
    }
    const building = new DecoderStaging(core, spec, blockBytes + stageBytes);
    try {
      if (w.layers.length !== spec.numLayers) throw blockCountError(spec, w.layers.length);
      for (const lw of w.layers) building.add(lw);
      return building.finish();
    } catch (e) {
      building.abort();
      throw e;
    }
  }

  /**
   * Runs the model over B sequences of n ids (causal, positions from 0).
   * @param {Int32Array} ids [B·n]
   * @param {number} B sequences
   * @param {{headMask?: Float32Array|null, weights?: boolean, lastOnly?: boolean}} [opts] headMask
   *   [L·h]; weights: return every layer's attention weights [L, B, h, n, n]; lastOnly: log-probs of
   *   the last position only
   * @param {string} [what='forward'] the API call this serves, prefixed to the core's errors
   * @returns {{logProbs: Float32Array, weights: Float32Array|null}} logProbs [B, n, V] (or [B, V])
   * @throws {MHAError} the core's errors (an id outside [0, V), too long for the position table …), DISPOSED
   */
  forward(ids, B, opts = {}, what = 'forward') {
    this._alive(what);
    const n = ids.length / B;
    const r = stageCall(this, this.spec, ids, B, n, n, opts, what);
    this._check(this._handle.forward(r.args), what);
    return callResults(this._core, r);
  }

  /**
   * A KV cache of maxLen tokens for `batch` sequences (see DecoderCache).
   * @param {number} maxLen
   * @param {number} [batch=1]
   * @param {{parent?: WasmObject, what?: string}} [opts] parent: disposes the cache with itself
   *   (default this decoder; a generator owns its cache); what: the API call, prefixed to errors
   * @throws {MHAError} INVALID_ARGUMENT (maxLen beyond the position table), OUT_OF_MEMORY, DISPOSED
   */
  createCache(maxLen, batch = 1, { parent = this, what = 'createCache' } = {}) {
    this._alive(what);
    const handle = initHandle(this._core, this._core.DecoderCacheHandle, (hd) => hd.init(this._handle, maxLen, batch), what);
    return new DecoderCache(this, handle, batch, parent);
  }
}

/**
 * The KV caches of every transformer block of a Decoder, stepped together (mha::DecoderCache).
 * Lifecycle as WasmObject's: disposed with its parent (its generator, or its decoder); after
 * dispose() step and reset throw DISPOSED ("this decoder cache was disposed").
 */
export class DecoderCache extends WasmObject {
  /**
   * @internal created by Decoder.createCache
   * @param {Decoder} decoder the decoder whose blocks the cache serves
   * @param {object} handle an initialized DecoderCacheHandle (owned from now on)
   * @param {number} batch sequences
   * @param {WasmObject} parent disposes this cache with itself
   */
  constructor(decoder, handle, batch, parent) {
    super(decoder._core, handle, 'decoder cache', parent);
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
   * @param {{headMask?: Float32Array|null, weights?: boolean, lastOnly?: boolean}} [opts] as Decoder.forward;
   *   weights [L, B, h, n, length+n]
   * @returns {{logProbs: Float32Array, weights: Float32Array|null}}
   * @throws {MHAError} INVALID_ARGUMENT (past maxLen, a bad id), DISPOSED
   */
  step(ids, opts = {}) {
    this._alive('step');
    const n = ids.length / this._batch;
    this._check(this._handle.checkStep(n), 'step');
    const r = stageCall(this, this._dec.spec, ids, this._batch, n, this.length + n, opts, 'step');
    this._check(this._handle.step(r.args), 'step');
    return callResults(this._core, r);
  }

  /** Forgets every token; keeps the memory. @throws {MHAError} DISPOSED */
  reset() {
    this._alive('reset');
    this._handle.reset();
  }
}
